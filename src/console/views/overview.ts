// Overview: the balance (live), the usage chart of the last 30 days (from the ledger), and the
// organization's settings: whether calls keep transcripts (owners and admins change it).
import type { DailyUsage } from '../../money/index.js';
import type { Organization } from '../../organizations/organizations.js';
import { escapeHtml } from '../../web/html.js';
import { consolePage, csrfField, wordsWithHtml, type ConsoleView } from '../layout.js';
import { hasRole } from '../session.js';
import { usageCharts } from '../usageChart.js';

export const money = (currency: string, language = 'en') => (amount: number) =>
  new Intl.NumberFormat(language, { style: 'currency', currency, maximumFractionDigits: 6 }).format(amount);

/** Whether new calls keep transcripts; a switch for owners and admins, said as it stands to viewers. */
function transcriptsSetting(view: ConsoleView, keeping: boolean): string {
  const { t } = view.words;
  const state = `<h3 id="transcripts-title">${escapeHtml(t('console.transcripts.heading'))}</h3>
<p>${escapeHtml(t(keeping ? 'console.transcripts.onText' : 'console.transcripts.offText'))}</p>`;
  if (!hasRole(view.member, 'admin')) {
    return `<section class="panel" aria-labelledby="transcripts-title">${state}<p class="muted">${escapeHtml(t('console.transcripts.onlyAdmins'))}</p></section>`;
  }
  return `<form class="panel" method="post" action="/console/settings/transcripts" aria-labelledby="transcripts-title">${csrfField(view.member)}
${state}
<input type="hidden" name="transcripts" value="${keeping ? 'off' : 'on'}">
<button type="submit"${keeping ? ' class="secondary"' : ''}>${escapeHtml(t(keeping ? 'console.transcripts.turnOff' : 'console.transcripts.turnOn'))}</button>
</form>`;
}

export function overviewPage(view: ConsoleView, input: { organization: Organization; transcripts: boolean; usage: DailyUsage[]; days: string[] }): string {
  const { organization } = input;
  const { words } = view;
  const { t } = words;
  const format = money(organization.currency, words.lang);
  const balance =
    view.mode === 'test'
      ? `<p>${escapeHtml(t('console.overview.testNeverBilled'))}</p>`
      : organization.balance === null
        ? `<p>${escapeHtml(t('console.overview.invoiced'))}</p>`
        : `<p class="balance">${wordsWithHtml(words, 'console.overview.balance', { amount: `<strong data-testid="balance">${escapeHtml(format(organization.balance))}</strong>` })}</p>`;
  const rates = `<p class="muted">${escapeHtml(
    t('console.overview.rates', { text: format(organization.text_rate_per_million_characters), voice: format(organization.voice_rate_per_minute) }),
  )}</p>`;
  return consolePage(
    view,
    t('console.nav.overview'),
    `${balance}${rates}
<h3>${escapeHtml(t('console.overview.usage', { days: input.days.length }))}</h3>
${usageCharts(words, input.usage, input.days, format)}
${transcriptsSetting(view, input.transcripts)}`,
  );
}
