// Phone numbers: the organization's numbers of the mode in view, each with its Voice URL to copy into
// Twilio. Every word comes from the page catalogue.
import type { PhoneNumberOut } from '../../calls/phoneNumbers.js';
import { escapeHtml } from '../../web/html.js';
import { consolePage, table, timeOf, type ConsoleView } from '../layout.js';

export function phoneNumbersPage(view: ConsoleView, numbers: PhoneNumberOut[]): string {
  const { t } = view.words;
  const rows = numbers.map((number) => {
    const urlId = `voice-url-${number.id}`;
    const numberId = `number-${number.id}`;
    return [
      `<strong id="${numberId}">${escapeHtml(number.number)}</strong>`,
      escapeHtml(t(number.mode === 'pin' ? 'console.phoneNumbers.pin' : 'console.phoneNumbers.newCall')),
      number.customer_languages ? `<code>${escapeHtml(number.customer_languages.join(', '))}</code>` : escapeHtml(t('console.phoneNumbers.fromCountry')),
      `<code id="${urlId}">${escapeHtml(number.voice_url)}</code> <button type="button" data-copy="${urlId}" aria-describedby="${numberId}">${escapeHtml(t('console.phoneNumbers.copy'))}</button>`,
      timeOf(view.words, number.created_at),
    ];
  });
  const title = t('console.phoneNumbers.title');
  return consolePage(
    view,
    title,
    `<p class="muted">${escapeHtml(t('console.phoneNumbers.intro'))}</p>
${table(
  title,
  [t('console.phoneNumbers.number'), t('console.phoneNumbers.answers'), t('console.phoneNumbers.languages'), t('console.phoneNumbers.voiceUrl'), t('console.phoneNumbers.created')],
  rows,
  t('console.phoneNumbers.none'),
)}`,
  );
}
