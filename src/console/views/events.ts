// The live view of the organization's events (the mode in view): the page's script follows
// /console/events/stream and puts each event at the top.
import { consolePage, type ConsoleView } from '../layout.js';

export function eventsPage(view: ConsoleView): string {
  return consolePage(
    view,
    'Events',
    `<p><a href="/console/events/history">Events history</a>: the stored events, filtered by type, call or session and time.</p>
<p id="events-status" class="muted" role="status" data-stream="/console/events/stream">Connecting…</p>
<ol id="events" class="events" aria-live="polite"></ol>`,
  );
}
