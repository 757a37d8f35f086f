// A call's and a support session's own page (the lists link to them): status, languages, the sides and
// their presence, the chat's messages in both languages, the events about it and what it was charged.
import type { CallOut } from '../../calls/calls.js';
import type { EventPayload } from '../../events/types.js';
import type { LedgerRowOut } from '../../money/index.js';
import type { MessageOut } from '../../sessions/messages.js';
import type { SessionOut } from '../../sessions/sessions.js';
import { escapeHtml } from '../../web/html.js';
import { consolePage, table, timeOf, type ConsoleView } from '../layout.js';

/** The events about an object, each with its JSON (newest first), and a link to all of them in the history. */
export function eventList(events: EventPayload[], empty: string): string {
  if (!events.length) return `<p class="muted empty">${escapeHtml(empty)}</p>`;
  return `<ol class="events">${events
    .map(
      (event) => `<li><p><strong class="event-type">${escapeHtml(event.type)}</strong> ${timeOf(event.created_at)}</p>
<details><summary>${escapeHtml(event.id)}</summary><pre>${escapeHtml(JSON.stringify(event, null, 2))}</pre></details></li>`,
    )
    .join('')}</ol>`;
}

export const chargesTable = (caption: string, rows: LedgerRowOut[]) =>
  table(
    caption,
    ['When', 'Kind', 'Quantity', 'Amount', 'For'],
    rows.map((row) => [timeOf(row.created_at), escapeHtml(row.kind), String(row.quantity), escapeHtml(String(row.amount)), escapeHtml(row.reference ?? '')]),
    'No charges.',
  );

const facts = (pairs: Array<[string, string]>) => `<dl class="facts">${pairs.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${value}</dd>`).join('')}</dl>`;

const presence = (joinedAt: string | null) => (joinedAt ? `joined ${timeOf(joinedAt)}` : '<span class="muted">not joined</span>');

export function callPage(
  view: ConsoleView,
  call: CallOut & { agent_joined_at: string | null; customer_joined_at: string | null },
  related: { events: EventPayload[]; charges: LedgerRowOut[] },
): string {
  return consolePage(
    view,
    `Call ${call.id}`,
    `<p><a href="/console/calls">All calls</a></p>
${facts([
  ['Status', `<span class="status ${call.status}">${call.status}</span>`],
  ['Created', timeOf(call.created_at)],
  ['Ended', call.ended_at ? timeOf(call.ended_at) : '<span class="muted">not yet</span>'],
  ['Agent', `${escapeHtml(call.agent_name)} (${escapeHtml(call.agent_language)}), ${presence(call.agent_joined_at)}`],
  ['Customer', `${escapeHtml(call.customer_name ?? 'Customer')} (${escapeHtml(call.customer_language ?? 'any')}), ${presence(call.customer_joined_at)}`],
  ['Video', call.video ? 'yes' : 'no'],
  ['External id', escapeHtml(call.external_id ?? '')],
  ['Support session', call.support_session_id ? `<a href="/console/sessions/${encodeURIComponent(call.support_session_id)}"><code>${escapeHtml(call.support_session_id)}</code></a>` : '<span class="muted">none</span>'],
])}
<section aria-labelledby="transcript-title" id="transcript" data-transcript-for="${escapeHtml(call.id)}">
<h3 id="transcript-title">Transcript</h3>
<!-- TRANSCRIPT: the call records work (GET /v1/calls/{id}/transcript) renders both languages side by side, with times and a WebVTT download, here. -->
<p class="muted">The transcript of this call is not available here yet.</p>
</section>
<h3>Charges</h3>
${chargesTable('Charges of this call', related.charges)}
<h3>Events</h3>
<p><a href="/console/events/history?object=${encodeURIComponent(call.id)}">In the events history</a></p>
${eventList(related.events, 'No events about this call.')}`,
  );
}

export function sessionPage(view: ConsoleView, session: SessionOut, related: { messages: MessageOut[]; events: EventPayload[]; charges: LedgerRowOut[] }): string {
  const agent = session.agent_language;
  const customer = session.customer_language ?? 'customer';
  const messages = table(
    'Messages in both languages',
    ['When', 'From', `Agent's language (${agent})`, `Customer's language (${customer})`],
    related.messages.map((m) => [
      timeOf(m.created_at),
      `${escapeHtml(m.author_name)}<br><span class="muted">${m.sender}${m.kind === 'voice' ? ', voice' : ''}</span>`,
      `<span lang="${escapeHtml(agent)}">${escapeHtml(m.agent_text)}</span>`,
      `<span${session.customer_language ? ` lang="${escapeHtml(session.customer_language)}"` : ''}>${escapeHtml(m.customer_text)}</span>`,
    ]),
    'No messages.',
  );
  return consolePage(
    view,
    `Session ${session.id}`,
    `<p><a href="/console/sessions">All sessions</a></p>
${facts([
  ['Status', `<span class="status ${session.status}">${session.status}</span>`],
  ['Created', timeOf(session.created_at)],
  ['Agent', `${escapeHtml(session.agent_name)} (${escapeHtml(agent)})`],
  ['Customer', `${escapeHtml(session.customer_name ?? 'Customer')} (${escapeHtml(session.customer_language ?? 'any')}), last seen ${timeOf(session.customer_last_seen_at)}`],
  ['External id', escapeHtml(session.external_id ?? '')],
])}
<h3>Messages</h3>
${messages}
<h3>Charges</h3>
${chargesTable('Charges of this session', related.charges)}
<h3>Events</h3>
<p><a href="/console/events/history?object=${encodeURIComponent(session.id)}">In the events history</a></p>
${eventList(related.events, 'No events about this session.')}`,
  );
}
