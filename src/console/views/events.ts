// The live view of the organization's events (the mode in view): the page's script follows
// /console/events/stream and puts each event at the top.
import { escapeHtml } from '../../web/html.js';
import { consolePage, wordsWithHtml, type ConsoleView } from '../layout.js';

export function eventsPage(view: ConsoleView): string {
  return consolePage(
    view,
    view.words.t('console.nav.events'),
    `<p>${wordsWithHtml(view.words, 'console.events.intro', { link: `<a href="/console/events/history">${escapeHtml(view.words.t('console.history.title'))}</a>` })}</p>
<p id="events-status" class="muted" role="status" data-stream="/console/events/stream">${escapeHtml(view.words.t('console.events.connecting'))}</p>
<ol id="events" class="events" aria-live="polite"></ol>`,
  );
}
