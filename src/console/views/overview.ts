// Overview: the balance (live) and the usage chart of the last 30 days, from the ledger.
import type { DailyUsage } from '../../money/index.js';
import type { Organization } from '../../organizations/organizations.js';
import { escapeHtml } from '../../web/html.js';
import { consolePage, type ConsoleView } from '../layout.js';
import { usageCharts } from '../usageChart.js';

export const money = (currency: string) => (amount: number) =>
  new Intl.NumberFormat('en', { style: 'currency', currency, maximumFractionDigits: 6 }).format(amount);

export function overviewPage(view: ConsoleView, input: { organization: Organization; usage: DailyUsage[]; days: string[] }): string {
  const { organization } = input;
  const format = money(organization.currency);
  const balance =
    view.mode === 'test'
      ? '<p>Test mode is never billed: the chart shows what test keys used.</p>'
      : organization.balance === null
        ? '<p>This organization is invoiced: there is no prepaid balance.</p>'
        : `<p class="balance">Balance <strong data-testid="balance">${escapeHtml(format(organization.balance))}</strong></p>`;
  const rates = `<p class="muted">Rates: ${escapeHtml(format(organization.text_rate_per_million_characters))} per million characters, ${escapeHtml(format(organization.voice_rate_per_minute))} per minute of voice.</p>`;
  return consolePage(
    view,
    'Overview',
    `${balance}${rates}
<h3>Usage, last ${input.days.length} days</h3>
${usageCharts(input.usage, input.days, format)}`,
  );
}
