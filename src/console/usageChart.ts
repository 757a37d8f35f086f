// The usage chart of the console's overview: one small bar chart per kind of usage (text, voice
// messages, calls), a bar per day, drawn on the server as SVG (no script, no chart library to ship).
// Each chart says in words what it shows, and a table below gives the totals.
import type { DailyUsage } from '../money/index.js';
import type { UsageKind } from '../money/prices.js';
import { escapeHtml } from '../web/html.js';
import type { PageWords } from '../web/i18n/catalogue.js';

/** Each kind's catalogue keys: its name, and its quantity with `{count}`. */
const KINDS: { kind: UsageKind; label: string; unit: string }[] = [
  { kind: 'text', label: 'console.usage.text', unit: 'console.usage.characters' },
  { kind: 'voice_message', label: 'console.usage.voiceMessages', unit: 'console.usage.seconds' },
  { kind: 'call', label: 'console.usage.calls', unit: 'console.usage.seconds' },
];

const WIDTH = 300;
const HEIGHT = 80;

/** The days of the window, oldest first, as YYYY-MM-DD. */
export function windowDays(start: Date, days: number): string[] {
  return Array.from({ length: days }, (_, i) => new Date(start.getTime() + i * 86_400_000).toISOString().slice(0, 10));
}

function barChart(words: PageWords, days: string[], byDay: Map<string, number>, label: string, unit: (n: number) => string): string {
  const most = Math.max(0, ...byDay.values());
  const slot = WIDTH / days.length;
  const bars = days
    .map((day, i) => {
      const quantity = byDay.get(day) ?? 0;
      if (!quantity) return '';
      const height = Math.max(1, (quantity / most) * (HEIGHT - 2));
      return `<rect class="bar" x="${(i * slot + slot * 0.15).toFixed(2)}" y="${(HEIGHT - height).toFixed(2)}" width="${(slot * 0.7).toFixed(2)}" height="${height.toFixed(2)}"><title>${day}: ${escapeHtml(unit(quantity))}</title></rect>`;
    })
    .join('');
  const total = [...byDay.values()].reduce((sum, n) => sum + n, 0);
  const values = { label, from: days[0], to: days[days.length - 1], total: unit(total), most: unit(most) };
  const summary = words.t(most ? 'console.usage.summaryMost' : 'console.usage.summary', values);
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-label="${escapeHtml(summary)}"><line class="axis" x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}"/>${bars}</svg>`;
}

/** The charts and the totals table of `usage` over `days` (oldest first); `money` formats a cost. */
export function usageCharts(words: PageWords, usage: DailyUsage[], days: string[], money: (amount: number) => string): string {
  const { t } = words;
  const kinds = KINDS.map(({ kind, label, unit }) => ({ kind, label: t(label), unit: (n: number) => t(unit, { count: n.toLocaleString(words.lang) }) }));
  const figures = kinds.map(({ kind, label, unit }) => {
    const byDay = new Map(usage.filter((u) => u.kind === kind).map((u) => [u.day, u.quantity]));
    return `<figure class="usage" data-kind="${kind}"><figcaption>${escapeHtml(label)}</figcaption>${barChart(words, days, byDay, label, unit)}</figure>`;
  }).join('');
  const rows = kinds.map(({ kind, label, unit }) => {
    const mine = usage.filter((u) => u.kind === kind);
    const quantity = mine.reduce((sum, u) => sum + u.quantity, 0);
    const cost = mine.reduce((sum, u) => sum + u.cost, 0);
    return `<tr data-kind="${kind}"><th scope="row">${escapeHtml(label)}</th><td>${escapeHtml(unit(quantity))}</td><td>${escapeHtml(money(cost))}</td></tr>`;
  }).join('');
  return `<div class="charts">${figures}</div>
<div class="table"><table class="totals"><caption>${escapeHtml(t('console.usage.totals', { from: days[0], to: days[days.length - 1] }))}</caption><thead><tr><th scope="col">${escapeHtml(t('console.usage.usage'))}</th><th scope="col">${escapeHtml(t('console.usage.amount'))}</th><th scope="col">${escapeHtml(t('console.usage.cost'))}</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}
