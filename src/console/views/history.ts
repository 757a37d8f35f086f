// The events history (the stored log, filtered by type, object and time) and the ledger (every charge
// and credit with what it paid for, filtered by kind and time, exported as CSV).
import type { EventPayload } from '../../events/types.js';
import type { LedgerKind, LedgerRowOut } from '../../money/index.js';
import { escapeHtml } from '../../web/html.js';
import { consolePage, type ConsoleView } from '../layout.js';
import { chargesTable, eventList } from './detail.js';

export interface HistoryFilter {
  type: string;
  object: string;
  from: string;
  to: string;
}

const dateField = (name: string, label: string, value: string) =>
  `<span><label for="${name}">${label}</label> <input id="${name}" name="${name}" type="date" value="${escapeHtml(value)}"></span>`;

export function eventsHistoryPage(view: ConsoleView, types: readonly string[], filter: HistoryFilter, events: EventPayload[], limit: number, error?: string): string {
  const options = ['', ...types].map((type) => `<option value="${type}"${type === filter.type ? ' selected' : ''}>${type || 'All types'}</option>`).join('');
  return consolePage(
    view,
    'Events history',
    `<p><a href="/console/events">Live view</a></p>
<form class="filters" method="get" action="/console/events/history">
<span><label for="type">Type</label> <select id="type" name="type">${options}</select></span>
<span><label for="object">Call or session id</label> <input id="object" name="object" type="text" maxlength="100" value="${escapeHtml(filter.object)}"></span>
${dateField('from', 'From', filter.from)}
${dateField('to', 'To (inclusive)', filter.to)}
<button type="submit" class="secondary">Filter</button>
</form>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<p class="muted">The newest ${limit} events of the ${view.mode} data that match, newest first.</p>
${eventList(events, 'No events match.')}`,
  );
}

export function ledgerPage(view: ConsoleView, kinds: readonly LedgerKind[], filter: { kind: string; from: string; to: string }, rows: LedgerRowOut[], limit: number, error?: string): string {
  const options = ['', ...kinds].map((kind) => `<option value="${kind}"${kind === filter.kind ? ' selected' : ''}>${kind || 'All kinds'}</option>`).join('');
  const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
  return consolePage(
    view,
    'Ledger',
    `<form class="filters" method="get" action="/console/ledger">
<span><label for="kind">Kind</label> <select id="kind" name="kind">${options}</select></span>
${dateField('from', 'From', filter.from)}
${dateField('to', 'To (inclusive)', filter.to)}
<button type="submit" class="secondary">Filter</button>
</form>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<p><a href="/console/ledger.csv${query ? `?${query}` : ''}" download>Export CSV</a> <span class="muted">(every matching row of the ${view.mode} ledger)</span></p>
<p class="muted">The newest ${limit} rows that match; charges are negative, credits positive.</p>
${chargesTable(`${view.mode} ledger`, rows)}`,
  );
}

const csvCell = (value: string | number | null) => {
  const text = value === null ? '' : String(value);
  // Quoted when needed; a leading =, +, - or @ is defused so a spreadsheet never runs it as a formula.
  const safe = /^[=+\-@\t\r]/.test(text) && typeof value === 'string' ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

export function ledgerCsv(rows: LedgerRowOut[]): string {
  const head = ['id', 'created_at', 'mode', 'kind', 'quantity', 'amount', 'reference', 'app_id'];
  return [head.join(','), ...rows.map((r) => [r.id, r.created_at, r.mode, r.kind, r.quantity, r.amount, r.reference, r.app_id].map(csvCell).join(','))].join('\r\n') + '\r\n';
}
