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
}

/**
 * Writes a ledger row and applies it to a prepaid balance in the caller's transaction, so the balance
 * always equals the sum of its live ledger rows. Test-mode rows never touch the balance.
 */
export async function recordLedgerEntry(trx: Knex.Transaction, entry: LedgerEntryInput): Promise<void> {
  await trx('ledger_entries').insert({
    org_id: entry.orgId,
    mode: entry.mode,
    kind: entry.kind,
    quantity: entry.quantity,
    amount_micros: entry.amountMicros,
    reference: entry.reference,
  });
  if (entry.mode === 'live' && entry.amountMicros !== 0) {
    await trx('organizations')
      .where({ id: entry.orgId })
      .whereNotNull('balance_micros')
      .update({ balance_micros: trx.raw('balance_micros + ?', [entry.amountMicros]) });
  }
}
