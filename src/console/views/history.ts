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
  `<span><label for="${name}">${escapeHtml(label)}</label> <input id="${name}" name="${name}" type="date" value="${escapeHtml(value)}"></span>`;

export function eventsHistoryPage(view: ConsoleView, types: readonly string[], filter: HistoryFilter, events: EventPayload[], limit: number, error?: string): string {
  const { words } = view;
  const { t } = words;
  const options = ['', ...types].map((type) => `<option value="${type}"${type === filter.type ? ' selected' : ''}>${escapeHtml(type || t('console.history.allTypes'))}</option>`).join('');
  return consolePage(
    view,
    t('console.history.title'),
    `<p><a href="/console/events">${escapeHtml(t('console.history.live'))}</a></p>
<form class="filters" method="get" action="/console/events/history">
<span><label for="type">${escapeHtml(t('console.history.type'))}</label> <select id="type" name="type">${options}</select></span>
<span><label for="object">${escapeHtml(t('console.history.object'))}</label> <input id="object" name="object" type="text" maxlength="100" value="${escapeHtml(filter.object)}"></span>
${dateField('from', t('console.history.from'), filter.from)}
${dateField('to', t('console.history.to'), filter.to)}
<button type="submit" class="secondary">${escapeHtml(t('console.filter'))}</button>
</form>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<p class="muted">${escapeHtml(t(view.mode === 'live' ? 'console.history.newestLive' : 'console.history.newestTest', { count: limit }))}</p>
${eventList(words, events, t('console.history.none'))}`,
  );
}

export function ledgerPage(view: ConsoleView, kinds: readonly LedgerKind[], filter: { kind: string; from: string; to: string }, rows: LedgerRowOut[], limit: number, error?: string): string {
  const { words } = view;
  const { t } = words;
  const live = view.mode === 'live';
  const options = ['', ...kinds]
    .map((kind) => `<option value="${kind}"${kind === filter.kind ? ' selected' : ''}>${escapeHtml(t(kind ? `console.ledgerKind.${kind}` : 'console.ledger.allKinds'))}</option>`)
    .join('');
  const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
  return consolePage(
    view,
    t('console.nav.ledger'),
    `<form class="filters" method="get" action="/console/ledger">
<span><label for="kind">${escapeHtml(t('console.kind'))}</label> <select id="kind" name="kind">${options}</select></span>
${dateField('from', t('console.history.from'), filter.from)}
${dateField('to', t('console.history.to'), filter.to)}
<button type="submit" class="secondary">${escapeHtml(t('console.filter'))}</button>
</form>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<p><a href="/console/ledger.csv${query ? `?${query}` : ''}" download>${escapeHtml(t('console.ledger.export'))}</a> <span class="muted">${escapeHtml(t(live ? 'console.ledger.exportLive' : 'console.ledger.exportTest'))}</span></p>
<p class="muted">${escapeHtml(t('console.ledger.newest', { count: limit }))}</p>
${chargesTable(words, t(live ? 'console.ledger.liveCaption' : 'console.ledger.testCaption'), rows)}`,
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
