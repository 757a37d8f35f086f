// Calls and support sessions of the mode in view: open and recent, filtered by status.
import type { CallOut } from '../../calls/calls.js';
import type { SessionOut } from '../../sessions/sessions.js';
import { escapeHtml } from '../../web/html.js';
import { consolePage, table, timeOf, type ConsoleView } from '../layout.js';

/** The number of rows a list shows (the newest). */
export const LIST_LIMIT = 50;

function statusFilter(view: ConsoleView, statuses: readonly string[], current: string | undefined): string {
  const options = ['', ...statuses]
    .map((s) => `<option value="${s}"${s === (current ?? '') ? ' selected' : ''}>${s ? s[0].toUpperCase() + s.slice(1) : 'All'}</option>`)
    .join('');
  return `<form class="filters" method="get" action="${view.path}"><label for="status">Status</label> <select id="status" name="status">${options}</select> <button type="submit" class="secondary">Filter</button></form>`;
}

const people = (row: { agent_name: string; agent_language: string; customer_name: string | null; customer_language: string | null }) =>
  `${escapeHtml(row.agent_name)} (${escapeHtml(row.agent_language)}) · ${escapeHtml(row.customer_name ?? 'Customer')} (${escapeHtml(row.customer_language ?? 'any')})`;

export function callsPage(view: ConsoleView, calls: CallOut[], status: CallOut['status'] | undefined): string {
  const rows = calls.map((call) => [
    `<a href="/console/calls/${encodeURIComponent(call.id)}"><code>${call.id}</code></a>`,
    `<span class="status ${call.status}">${call.status}</span>`,
    people(call),
    escapeHtml(call.external_id ?? ''),
    timeOf(call.created_at),
    call.ended_at ? timeOf(call.ended_at) : '',
  ]);
  return consolePage(
    view,
    'Calls',
    `${statusFilter(view, ['open', 'ended'], status)}
${table('Calls', ['Call', 'Status', 'Agent · customer', 'External id', 'Created', 'Ended'], rows, 'No calls.')}`,
  );
}

export function sessionsPage(view: ConsoleView, sessions: SessionOut[], status: SessionOut['status'] | undefined): string {
  const rows = sessions.map((session) => [
    `<a href="/console/sessions/${encodeURIComponent(session.id)}"><code>${session.id}</code></a>`,
    `<span class="status ${session.status}">${session.status}</span>`,
    people(session),
    escapeHtml(session.external_id ?? ''),
    timeOf(session.created_at),
    session.customer_last_seen_at ? timeOf(session.customer_last_seen_at) : '',
  ]);
  return consolePage(
    view,
    'Support sessions',
    `${statusFilter(view, ['open', 'closed'], status)}
${table('Support sessions', ['Session', 'Status', 'Agent · customer', 'External id', 'Created', 'Customer last seen'], rows, 'No sessions.')}`,
  );
}
