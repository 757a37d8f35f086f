// Calls and support sessions of the mode in view: open and recent, filtered by status.
import type { CallOut } from '../../calls/calls.js';
import type { SessionOut } from '../../sessions/sessions.js';
import { escapeHtml } from '../../web/html.js';
import { consolePage, table, timeOf, type ConsoleView } from '../layout.js';

/** The number of rows a list shows (the newest). */
export const LIST_LIMIT = 50;

function statusFilter(view: ConsoleView, statuses: readonly string[], current: string | undefined): string {
  const { t } = view.words;
  const options = ['', ...statuses]
    .map((s) => `<option value="${s}"${s === (current ?? '') ? ' selected' : ''}>${escapeHtml(t(s ? `console.status.${s}` : 'console.all'))}</option>`)
    .join('');
  return `<form class="filters" method="get" action="${view.path}"><label for="status">${escapeHtml(t('console.status'))}</label> <select id="status" name="status">${options}</select> <button type="submit" class="secondary">${escapeHtml(t('console.filter'))}</button></form>`;
}

/** A status as the reader reads it (the value stays in the class). */
export const statusOf = (view: ConsoleView, status: string) => `<span class="status ${status}">${escapeHtml(view.words.t(`console.status.${status}`))}</span>`;

const people = (
  view: ConsoleView,
  row: { agent_name: string; agent_language: string; customer_name: string | null; customer_language: string | null },
) =>
  `${escapeHtml(row.agent_name)} (${escapeHtml(row.agent_language)}) · ${escapeHtml(row.customer_name ?? view.words.t('console.customer'))} (${escapeHtml(row.customer_language ?? view.words.t('console.anyLanguage'))})`;

export function callsPage(view: ConsoleView, calls: CallOut[], status: CallOut['status'] | undefined): string {
  const { words } = view;
  const { t } = words;
  const rows = calls.map((call) => [
    `<a href="/console/calls/${encodeURIComponent(call.id)}"><code>${call.id}</code></a>`,
    statusOf(view, call.status),
    people(view, call),
    escapeHtml(call.external_id ?? ''),
    timeOf(words, call.created_at),
    call.ended_at ? timeOf(words, call.ended_at) : '',
  ]);
  return consolePage(
    view,
    t('console.nav.calls'),
    `${statusFilter(view, ['open', 'ended'], status)}
${table(
  t('console.nav.calls'),
  [t('console.calls.call'), t('console.status'), t('console.agentCustomer'), t('console.externalId'), t('console.created'), t('console.calls.ended')],
  rows,
  t('console.calls.none'),
)}`,
  );
}

export function sessionsPage(view: ConsoleView, sessions: SessionOut[], status: SessionOut['status'] | undefined): string {
  const { words } = view;
  const { t } = words;
  const rows = sessions.map((session) => [
    `<a href="/console/sessions/${encodeURIComponent(session.id)}"><code>${session.id}</code></a>`,
    statusOf(view, session.status),
    people(view, session),
    escapeHtml(session.external_id ?? ''),
    timeOf(words, session.created_at),
    session.customer_last_seen_at ? timeOf(words, session.customer_last_seen_at) : '',
  ]);
  return consolePage(
    view,
    t('console.sessions.title'),
    `${statusFilter(view, ['open', 'closed'], status)}
${table(
  t('console.sessions.title'),
  [t('console.sessions.session'), t('console.status'), t('console.agentCustomer'), t('console.externalId'), t('console.created'), t('console.sessions.lastSeen')],
  rows,
  t('console.sessions.none'),
)}`,
  );
}
