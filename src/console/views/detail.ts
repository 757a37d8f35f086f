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
import type { PageWords } from '../../web/i18n/catalogue.js';
import { consolePage, table, timeOf, wordsWithHtml, type ConsoleView } from '../layout.js';
import { statusOf } from './activity.js';

/** The events about an object, each with its JSON (newest first), and a link to all of them in the history. */
export function eventList(words: PageWords, events: EventPayload[], empty: string): string {
  if (!events.length) return `<p class="muted empty">${escapeHtml(empty)}</p>`;
  return `<ol class="events">${events
    .map(
      (event) => `<li><p><strong class="event-type">${escapeHtml(event.type)}</strong> ${timeOf(words, event.created_at)}</p>
<details><summary>${escapeHtml(event.id)}</summary><pre>${escapeHtml(JSON.stringify(event, null, 2))}</pre></details></li>`,
    )
    .join('')}</ol>`;
}

export const chargesTable = (words: PageWords, caption: string, rows: LedgerRowOut[]) =>
  table(
    caption,
    [words.t('console.when'), words.t('console.kind'), words.t('console.quantity'), words.t('console.amount'), words.t('console.for')],
    rows.map((row) => [timeOf(words, row.created_at), escapeHtml(words.t(`console.ledgerKind.${row.kind}`)), String(row.quantity), escapeHtml(String(row.amount)), row.reference ? `<span class="reference">${escapeHtml(row.reference)}</span>` : '']),
    words.t('console.noCharges'),
  );

const facts = (pairs: Array<[string, string]>) => `<dl class="facts">${pairs.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${value}</dd>`).join('')}</dl>`;

const presence = (words: PageWords, joinedAt: string | null) =>
  joinedAt ? wordsWithHtml(words, 'console.detail.joined', { time: timeOf(words, joinedAt) }) : `<span class="muted">${escapeHtml(words.t('console.detail.notJoined'))}</span>`;
const muted = (text: string) => `<span class="muted">${escapeHtml(text)}</span>`;

/** mm:ss from the start of the call. */
const offsetOf = (ms: number) => `${String(Math.floor(ms / 60_000)).padStart(2, '0')}:${String(Math.floor(ms / 1000) % 60).padStart(2, '0')}`;

/** Each utterance as said and as the other side heard it, side by side, with its time in the call. */
function transcriptSection(words: PageWords, callId: string, utterances: UtteranceOut[], more: boolean): string {
  const { t } = words;
  if (!utterances.length) return `<p class="muted empty">${escapeHtml(t('console.detail.noUtterances'))}</p>`;
  const rows = utterances.map((u) => [
    `<time datetime="${escapeHtml(u.started_at)}">${offsetOf(u.offset_ms)}</time>`,
    `${escapeHtml(u.speaker)} ${muted(`(${t(u.side === 'agent' ? 'console.agent' : 'console.customer')})`)}`,
    `<span lang="${escapeHtml(u.language)}">${escapeHtml(u.text)}</span>`,
    `<span lang="${escapeHtml(u.translation.language)}">${escapeHtml(u.translation.text)}</span>`,
  ]);
  const vtt = `/console/calls/${encodeURIComponent(callId)}/transcript.vtt`;
  return `<p><a href="${vtt}" download>${escapeHtml(t('console.detail.downloadVtt'))}</a>${more ? ` ${escapeHtml(t('console.detail.firstUtterances', { count: String(utterances.length) }))}` : ''}</p>
${table(t('console.detail.transcriptCaption'), [t('console.when'), t('console.detail.from'), t('console.detail.said'), t('console.detail.heard')], rows, '')}`;
}

function statsFacts(words: PageWords, stats: CallStats | null): string {
  const { t } = words;
  if (!stats) return `<p class="muted empty">${escapeHtml(t('console.detail.statsLater'))}</p>`;
  const perSide = (values: { agent: number; customer: number }, unit = '') =>
    escapeHtml(`${t('console.agent')} ${values.agent}${unit}, ${t('console.customer')} ${values.customer}${unit}`);
  const latency = (percentiles: { p50: number | null; p95: number | null } | null) =>
    percentiles && percentiles.p50 !== null ? `p50 ${percentiles.p50} ms, p95 ${percentiles.p95} ms` : muted(t('console.detail.noTurns'));
  return facts([
    [t('console.detail.present'), perSide(stats.seconds_present, ' s')],
    [t('console.detail.interpreted'), perSide(stats.seconds_interpreted, ' s')],
    [t('console.detail.charged'), escapeHtml(String(stats.amount_charged))],
    [t('console.detail.latencyToCustomer'), latency(stats.latency_ms.agent_to_customer)],
    [t('console.detail.latencyToAgent'), latency(stats.latency_ms.customer_to_agent)],
    [t('console.detail.audioDropped'), perSide(stats.frames_dropped)],
  ]);
}

export function callPage(
  view: ConsoleView,
  call: CallOut & { agent_joined_at: string | null; customer_joined_at: string | null; stats: CallStats | null },
  related: { events: EventPayload[]; charges: LedgerRowOut[]; utterances: UtteranceOut[]; moreUtterances: boolean },
): string {
  const { words } = view;
  const { t } = words;
  return consolePage(
    view,
    t('console.detail.call', { id: call.id }),
    `<p><a href="/console/calls">${escapeHtml(t('console.detail.allCalls'))}</a></p>
${facts([
  [t('console.status'), statusOf(view, call.status)],
  [t('console.created'), timeOf(words, call.created_at)],
  [t('console.calls.ended'), call.ended_at ? timeOf(words, call.ended_at) : muted(t('console.detail.notYet'))],
  [t('console.agent'), `${escapeHtml(call.agent_name)} (${escapeHtml(call.agent_language)}), ${presence(words, call.agent_joined_at)}`],
  [t('console.customer'), `${escapeHtml(call.customer_name ?? t('console.customer'))} (${escapeHtml(call.customer_language ?? t('console.anyLanguage'))}), ${presence(words, call.customer_joined_at)}`],
  [t('console.detail.video'), escapeHtml(t(call.video ? 'console.yes' : 'console.no'))],
  [t('console.externalId'), escapeHtml(call.external_id ?? '')],
  [t('console.detail.supportSession'), call.support_session_id ? `<a href="/console/sessions/${encodeURIComponent(call.support_session_id)}"><code>${escapeHtml(call.support_session_id)}</code></a>` : muted(t('console.none'))],
])}
<section aria-labelledby="stats-title" id="stats">
<h3 id="stats-title">${escapeHtml(t('console.detail.howItWent'))}</h3>
${statsFacts(words, call.stats)}
</section>
<section aria-labelledby="transcript-title" id="transcript">
<h3 id="transcript-title">${escapeHtml(t('console.detail.transcript'))}</h3>
${transcriptSection(words, call.id, related.utterances, related.moreUtterances)}
</section>
<h3>${escapeHtml(t('console.detail.charges'))}</h3>
${chargesTable(words, t('console.detail.callCharges'), related.charges)}
<h3>${escapeHtml(t('console.nav.events'))}</h3>
<p><a href="/console/events/history?object=${encodeURIComponent(call.id)}">${escapeHtml(t('console.detail.inHistory'))}</a></p>
${eventList(words, related.events, t('console.detail.noCallEvents'))}`,
  );
}

export function sessionPage(view: ConsoleView, session: SessionOut, related: { messages: MessageOut[]; events: EventPayload[]; charges: LedgerRowOut[] }): string {
  const { words } = view;
  const { t } = words;
  const agent = session.agent_language;
  const customer = session.customer_language ?? t('console.anyLanguage');
  const messages = table(
    t('console.detail.messagesBoth'),
    [t('console.when'), t('console.detail.from'), t('console.detail.agentLanguage', { language: agent }), t('console.detail.customerLanguage', { language: customer })],
    related.messages.map((m) => [
      timeOf(words, m.created_at),
      `${escapeHtml(m.author_name)}<br><span class="muted">${escapeHtml(t(m.sender === 'agent' ? 'console.agent' : 'console.customer'))}${m.kind === 'voice' ? `, ${escapeHtml(t('console.detail.voice'))}` : ''}</span>`,
      `<span lang="${escapeHtml(agent)}">${escapeHtml(m.agent_text)}</span>`,
      `<span${session.customer_language ? ` lang="${escapeHtml(session.customer_language)}"` : ''}>${escapeHtml(m.customer_text)}</span>`,
    ]),
    t('console.detail.noMessages'),
  );
  return consolePage(
    view,
    t('console.detail.session', { id: session.id }),
    `<p><a href="/console/sessions">${escapeHtml(t('console.detail.allSessions'))}</a></p>
${facts([
  [t('console.status'), statusOf(view, session.status)],
  [t('console.created'), timeOf(words, session.created_at)],
  [t('console.agent'), `${escapeHtml(session.agent_name)} (${escapeHtml(agent)})`],
  [
    t('console.customer'),
    `${escapeHtml(session.customer_name ?? t('console.customer'))} (${escapeHtml(customer)}), ${wordsWithHtml(words, 'console.detail.lastSeen', { time: timeOf(words, session.customer_last_seen_at) })}`,
  ],
  [t('console.externalId'), escapeHtml(session.external_id ?? '')],
])}
<h3>${escapeHtml(t('console.detail.messages'))}</h3>
${messages}
<h3>${escapeHtml(t('console.detail.charges'))}</h3>
${chargesTable(words, t('console.detail.sessionCharges'), related.charges)}
<h3>${escapeHtml(t('console.nav.events'))}</h3>
<p><a href="/console/events/history?object=${encodeURIComponent(session.id)}">${escapeHtml(t('console.detail.inHistory'))}</a></p>
${eventList(words, related.events, t('console.detail.noSessionEvents'))}`,
  );
}
