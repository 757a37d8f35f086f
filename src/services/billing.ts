// What billable work costs and who pays: the 402 check before work starts, and the charge after.
import type { Knex } from 'knex';
import { isLive, type Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import { recordLedgerEntry, type LedgerKind } from './ledger.js';
import { getOrganization, type OrganizationRow } from './organizations.js';

/**
 * The paying organization; refuses (402) live billable work once a prepaid balance is used up.
 * Invoiced organizations (no balance) and test mode are never refused for money.
 */
export async function fundedPayer(db: Knex, payer: Payer): Promise<OrganizationRow> {
  const org = await getOrganization(db, payer.orgId);
  if (isLive(payer) && org.balance_micros !== null && org.balance_micros <= 0) throw errors.paymentRequired();
  return org;
}

/** Text: characters times the rate per million characters, rounded to whole micro-units. */
export const textCostMicros = (org: OrganizationRow, characters: number) =>
  Math.round((characters * org.text_rate_micros) / 1_000_000);

/** Voice: seconds at the per-minute rate, rounded to whole micro-units. */
export const voiceCostMicros = (org: OrganizationRow, seconds: number) =>
  Math.round((seconds * org.voice_rate_micros) / 60);

export interface Usage {
  kind: Exclude<LedgerKind, 'credit'>;
  quantity: number;
  costMicros: number;
  reference: string | null;
  /** Set when the request carries an Idempotency-Key: a retried request is charged once. */
  requestRef: string | null;
}

/** Charges live usage through the ledger; returns what was charged (0 in test mode). */
export async function chargeUsage(db: Knex, payer: Payer, usage: Usage) {
  if (!isLive(payer) || usage.quantity === 0) return { quantity: 0, costMicros: 0 };
  const entry = await db.transaction((trx) =>
    recordLedgerEntry(trx, {
      orgId: payer.orgId,
      mode: payer.mode,
      kind: usage.kind,
      quantity: usage.quantity,
      amountMicros: -usage.costMicros,
      reference: usage.reference,
      requestRef: usage.requestRef,
    }),
  );
  return { quantity: entry.quantity, costMicros: -entry.amount_micros };
}
