// Overview: the balance (live) and the usage chart of the last 30 days, from the ledger.
import type { DailyUsage } from '../../money/index.js';
import type { Organization } from '../../organizations/organizations.js';
import { escapeHtml } from '../../web/html.js';
import { consolePage, wordsWithHtml, type ConsoleView } from '../layout.js';
import { usageCharts } from '../usageChart.js';

export const money = (currency: string, language = 'en') => (amount: number) =>
  new Intl.NumberFormat(language, { style: 'currency', currency, maximumFractionDigits: 6 }).format(amount);

export function overviewPage(view: ConsoleView, input: { organization: Organization; usage: DailyUsage[]; days: string[] }): string {
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
${usageCharts(words, input.usage, input.days, format)}`,
  );
}
