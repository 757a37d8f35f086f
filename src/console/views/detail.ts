// A call's and a support session's own page (the lists link to them): status, languages, the sides and
// their presence, how the call went and its transcript in both languages, the chat's messages in both
// languages, the events about it and what it was charged.
import type { CallStats } from '../../calls/callStats.js';
import type { CallOut } from '../../calls/calls.js';
import type { UtteranceOut } from '../../calls/transcripts.js';
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

/** mm:ss from the start of the call. */
const offsetOf = (ms: number) => `${String(Math.floor(ms / 60_000)).padStart(2, '0')}:${String(Math.floor(ms / 1000) % 60).padStart(2, '0')}`;

/** Each utterance as said and as the other side heard it, side by side, with its time in the call. */
function transcriptSection(callId: string, utterances: UtteranceOut[], more: boolean): string {
  if (!utterances.length) return '<p class="muted empty">No utterances: nobody spoke yet, the call keeps no transcript, or it was erased.</p>';
  const rows = utterances.map((u) => [
    `<time datetime="${escapeHtml(u.started_at)}">${offsetOf(u.offset_ms)}</time>`,
    `${escapeHtml(u.speaker)} <span class="muted">(${escapeHtml(u.side)})</span>`,
    `<span lang="${escapeHtml(u.language)}">${escapeHtml(u.text)}</span>`,
    `<span lang="${escapeHtml(u.translation.language)}">${escapeHtml(u.translation.text)}</span>`,
  ]);
  const vtt = `/console/calls/${encodeURIComponent(callId)}/transcript.vtt`;
  return `<p><a href="${vtt}" download>Download WebVTT</a>${more ? ' (the page shows the first utterances; the download holds them all)' : ''}</p>
${table('Transcript: what each side said and what the other side heard', ['Time', 'Speaker', 'Said', 'Heard'], rows, '')}`;
}

const perSide = (values: { agent: number; customer: number }, unit: string) => `agent ${values.agent} ${unit}, customer ${values.customer} ${unit}`;
const latency = (percentiles: { p50: number | null; p95: number | null } | null) =>
  percentiles && percentiles.p50 !== null ? `p50 ${percentiles.p50} ms, p95 ${percentiles.p95} ms` : '<span class="muted">no interpreted turns</span>';

function statsFacts(stats: CallStats | null): string {
  if (!stats) return '<p class="muted empty">Shown once the call has ended.</p>';
  return facts([
    ['Present', perSide(stats.seconds_present, 's')],
    ['Interpreted', perSide(stats.seconds_interpreted, 's')],
    ['Charged', escapeHtml(String(stats.amount_charged))],
    ['Latency, agent to customer', latency(stats.latency_ms.agent_to_customer)],
    ['Latency, customer to agent', latency(stats.latency_ms.customer_to_agent)],
    ['Audio dropped', perSide(stats.frames_dropped, 'chunks')],
  ]);
}

export function callPage(
  view: ConsoleView,
  call: CallOut & { agent_joined_at: string | null; customer_joined_at: string | null; stats: CallStats | null },
  related: { events: EventPayload[]; charges: LedgerRowOut[]; utterances: UtteranceOut[]; moreUtterances: boolean },
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
<section aria-labelledby="stats-title" id="stats">
<h3 id="stats-title">How the call went</h3>
${statsFacts(call.stats)}
</section>
<section aria-labelledby="transcript-title" id="transcript">
<h3 id="transcript-title">Transcript</h3>
${transcriptSection(call.id, related.utterances, related.moreUtterances)}
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
