import type { Knex } from 'knex';
import type { Mode } from '../auth/principal.js';

export type LedgerKind = 'credit' | 'text' | 'voice_message' | 'call';

export interface LedgerEntryInput {
  orgId: string;
  mode: Mode;
  kind: LedgerKind;
  quantity: number;
  /** Positive adds to the balance (credit), negative charges it. */
  amountMicros: number;
  reference: string | null;
  /** Identifies the request that caused the entry; a second entry for the same request is not made. */
  requestRef?: string | null;
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
  created_at: Date;
}

/**
 * Writes a ledger row and applies it to a prepaid balance in the caller's transaction, so the balance
 * always equals the sum of its live ledger rows. Test-mode rows never touch the balance. When the
 * request already has its entry (a retry after a crash), that entry is returned and nothing changes.
 */
export async function recordLedgerEntry(trx: Knex.Transaction, entry: LedgerEntryInput): Promise<LedgerEntry> {
  const [inserted] = await trx<LedgerEntry>('ledger_entries')
    .insert({
      org_id: entry.orgId,
      mode: entry.mode,
      kind: entry.kind,
      quantity: entry.quantity,
      amount_micros: entry.amountMicros,
      reference: entry.reference,
      request_ref: entry.requestRef ?? null,
    })
    .onConflict('request_ref')
    .ignore()
    .returning('*');
  if (!inserted) {
    return (await trx<LedgerEntry>('ledger_entries').where({ request_ref: entry.requestRef! }).first())!;
  }
  if (entry.mode === 'live' && entry.amountMicros !== 0) {
    await trx('organizations')
      .where({ id: entry.orgId })
      .whereNotNull('balance_micros')
      .update({ balance_micros: trx.raw('balance_micros + ?', [entry.amountMicros]) });
  }
  return inserted;
}
