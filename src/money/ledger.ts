// The ledger: every change of a prepaid balance is one row, written in the same transaction as the
// change, so the balance always equals the sum of the organization's live rows.
import type { Knex } from 'knex';
import type { Mode } from '../auth/principal.js';
import { errors } from '../errors.js';
import type { OrganizationRow } from '../db/organizations.js';
import { statement } from '../db/statement.js';
import { fromMicros } from './amounts.js';
import type { UsageKind } from './prices.js';

export type LedgerKind = 'credit' | UsageKind;

export interface LedgerEntryInput {
  orgId: string;
  mode: Mode;
  kind: LedgerKind;
  quantity: number;
  /** Positive adds to the balance (credit), negative charges it. */
  amountMicros: number;
  /** What the entry pays for: `message <id>`, a call id, `translate ...`, `admin credit`. */
  reference: string | null;
  /** Identifies the request that caused the entry; a second entry for the same request is not made. */
  requestRef?: string | null;
  /** The installed app whose request caused the entry; null for everything else (docs/oauth.md). */
  appId: string | null;
}

export interface LedgerEntry {
  id: number;
  org_id: string;
  mode: Mode;
  kind: LedgerKind;
  quantity: number;
  amount_micros: number;
  reference: string | null;
  request_ref: string | null;
  /** The installed app whose request caused the entry, if one did. */
  app_id: string | null;
  created_at: Date;
}

/** Hears each ledger entry once the transaction that wrote it has committed (never a rolled-back one). */
export type LedgerObserver = (entry: LedgerEntry) => void;

const OBSERVER = 'ledgerObserver';

/**
 * Entries written through `db` (and every transaction begun from it) are told to `observer` once
 * committed. The ledger is written deep in services that see only a transaction; a knex instance's
 * user params travel with every transaction made from it, so two instances in one process count apart.
 */
export function observeLedger(db: Knex, observer: LedgerObserver): void {
  db.userParams = { ...db.userParams, [OBSERVER]: observer };
}

const observerOf = (db: Knex): LedgerObserver | undefined => db.userParams?.[OBSERVER] as LedgerObserver | undefined;

/**
 * Tells the observer once the outermost transaction has committed. Its execution promise fulfils on
 * COMMIT and rejects on rollback (transactions here run as handlers, rolled back with their error).
 */
function observeOnCommit(trx: Knex.Transaction, entry: LedgerEntry): void {
  // A savepoint's own promise fulfils when it is released, and it does not carry the user params.
  let outermost = trx;
  while (outermost.parentTransaction) outermost = outermost.parentTransaction;
  const observer = observerOf(outermost);
  if (!observer) return;
  outermost.executionPromise.then(
    () => observer(entry),
    () => undefined,
  );
}

/** The entry a request already has (a retry after a crash), if any. */
export async function entryOfRequest(db: Knex, requestRef: string | null): Promise<LedgerEntry | undefined> {
  if (requestRef === null) return undefined;
  return db<LedgerEntry>('ledger_entries').where({ request_ref: requestRef }).first();
}

/**
 * Inserts a ledger row; when the request already has its entry, that entry comes back with
 * `inserted: false` and the caller must not touch the balance.
 */
export async function insertLedgerEntry(
  trx: Knex.Transaction,
  entry: LedgerEntryInput,
): Promise<{ entry: LedgerEntry; inserted: boolean }> {
  const [inserted] = await trx<LedgerEntry>('ledger_entries')
    .insert({
      org_id: entry.orgId,
      mode: entry.mode,
      kind: entry.kind,
      quantity: entry.quantity,
      amount_micros: entry.amountMicros,
      reference: entry.reference,
      request_ref: entry.requestRef ?? null,
      app_id: entry.appId,
    })
    .onConflict('request_ref')
    .ignore()
    .returning('*');
  if (inserted) {
    observeOnCommit(trx, inserted);
    return { entry: inserted, inserted: true };
  }
  return { entry: (await entryOfRequest(trx, entry.requestRef ?? null))!, inserted: false };
}

/**
 * Books an amount that needs no reservation (credits; a live call's seconds go through bookCallSeconds)
 * on a prepaid balance in the caller's transaction: a ledger row and the balance change together.
 * Test-mode rows and invoiced organizations leave the balance alone. Returns the organization as it is
 * afterwards.
 */
export async function bookEntry(trx: Knex.Transaction, entry: LedgerEntryInput): Promise<OrganizationRow> {
  const { inserted } = await insertLedgerEntry(trx, entry);
  if (inserted && entry.mode === 'live' && entry.amountMicros !== 0) {
    const [updated] = await trx<OrganizationRow>('organizations')
      .where({ id: entry.orgId })
      .whereNotNull('balance_micros')
      .update({ balance_micros: trx.raw('balance_micros + ?', [entry.amountMicros]) })
      .returning('*');
    if (updated) return updated;
  }
  const org = await trx<OrganizationRow>('organizations').where({ id: entry.orgId }).first();
  if (!org) throw errors.notFound('organization');
  return org;
}

/**
 * A live call's seconds as one statement, which needs no transaction around it: the ledger row and the
 * balance change commit together. Charges come every few seconds from every live call, and a
 * transaction (BEGIN, the row, the balance, a read, COMMIT through knex) cost about 120 KiB of
 * allocation and 2 ms of CPU each, much of it kept past the young generation while charges queued for
 * the database (bench:media). The organization comes back as it is afterwards: charged, or as it was
 * (an invoiced organization's balance is left alone, as bookEntry does).
 */
const chargingCall = statement<OrganizationRow & { entry_id: number; entry_created_at: Date }>(
  `WITH entry AS (
     INSERT INTO ledger_entries (org_id, mode, kind, quantity, amount_micros, reference, request_ref, app_id)
     VALUES (?, 'live', 'call', ?, ?, ?, NULL, NULL)
     RETURNING id, created_at
   ), charged AS (
     UPDATE organizations SET balance_micros = balance_micros + ? WHERE id = ? AND balance_micros IS NOT NULL RETURNING *
   ), after AS (
     SELECT * FROM charged
     UNION ALL
     SELECT * FROM organizations WHERE id = ? AND NOT EXISTS (SELECT 1 FROM charged)
   )
   SELECT after.*, entry.id AS entry_id, entry.created_at AS entry_created_at FROM after, entry`,
);

/**
 * Books `seconds` of a live call costing `amountMicros` (negative) in one statement of its own (never in
 * a transaction, whose commit the observer would have to wait for); the organization afterwards.
 */
export async function bookCallSeconds(db: Knex, orgId: string, callId: string, seconds: number, amountMicros: number): Promise<OrganizationRow> {
  if (db.isTransaction) throw new Error('call seconds are booked in a statement of their own, not in a transaction');
  const [row] = await chargingCall.rows(db, [orgId, seconds, amountMicros, callId, amountMicros, orgId, orgId]);
  if (!row) throw errors.notFound('organization');
  const { entry_id: id, entry_created_at: createdAt, ...org } = row;
  // The statement has committed: the observer hears the entry now.
  observerOf(db)?.({ id, org_id: orgId, mode: 'live', kind: 'call', quantity: seconds, amount_micros: amountMicros, reference: callId, request_ref: null, app_id: null, created_at: createdAt });
  return org;
}

/** A ledger row as the operator reads it: amounts in the currency, not micro-units. */
export interface LedgerRowOut {
  id: number;
  mode: Mode;
  kind: LedgerKind;
  quantity: number;
  amount: number;
  reference: string | null;
  /** The installed app whose request caused the row, if one did. */
  app_id: string | null;
  created_at: string;
}

/** Which rows of the ledger: a mode, kinds, a time span, what they paid for (their references). */
export interface LedgerFilter {
  mode?: 'live' | 'test';
  kind?: LedgerKind;
  since?: Date;
  until?: Date;
  references?: string[];
}

/** The organization's ledger newest first, `limit` rows, older than row `before` when given, as `filter` narrows it. */
export async function listLedger(db: Knex, orgId: string, page: { limit: number; before?: number }, filter: LedgerFilter = {}): Promise<LedgerRowOut[]> {
  const query = db<LedgerEntry>('ledger_entries').where({ org_id: orgId }).orderBy('id', 'desc').limit(page.limit);
  if (page.before !== undefined) query.andWhere('id', '<', page.before);
  if (filter.mode) query.andWhere({ mode: filter.mode });
  if (filter.kind) query.andWhere({ kind: filter.kind });
  if (filter.since) query.andWhere('created_at', '>=', filter.since);
  if (filter.until) query.andWhere('created_at', '<', filter.until);
  if (filter.references) query.whereIn('reference', filter.references);
  const rows = await query.select('id', 'mode', 'kind', 'quantity', 'amount_micros', 'reference', 'app_id', 'created_at');
  return rows.map((row) => ({
    id: row.id,
    mode: row.mode,
    kind: row.kind,
    quantity: row.quantity,
    amount: fromMicros(row.amount_micros),
    reference: row.reference,
    app_id: row.app_id,
    created_at: row.created_at.toISOString(),
  }));
}
