// Who pays, and the money that moves without a reservation: the 402 gate before billable work, call
// seconds (charged as they are used, so a call overdraws by one started second at most), and credits.
import type { Knex } from 'knex';
import { isLive, type Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import { getOrganization, organizationTerms, rememberTerms, type OrganizationRow, type OrganizationTerms } from '../db/organizations.js';
import { bookCallSeconds, bookEntry } from './ledger.js';
import { balanceRunOut, fundedCallMs, voiceCostMicros } from './prices.js';

/**
 * The paying organization's terms; refuses (402) live billable work once a prepaid balance has nothing
 * left to spend (balance - held <= 0). Invoiced organizations and test mode are never refused for
 * money, and test mode reads no balance at all.
 */
export async function fundedPayer(db: Knex, payer: Payer): Promise<OrganizationTerms> {
  if (!isLive(payer)) return organizationTerms(db, payer.orgId);
  const org = await getOrganization(db, payer.orgId);
  if (balanceRunOut(org)) throw errors.paymentRequired();
  return rememberTerms(org);
}

/**
 * What a call's interpretation may still spend: nothing (the prepaid balance has run out), or how many
 * milliseconds the available balance pays for (null: nothing limits it, an invoiced organization).
 */
export type CallFunding = { runOut: true } | { runOut: false; fundedMs: number | null };

const fundingOf = (org: OrganizationRow): CallFunding =>
  balanceRunOut(org) ? { runOut: true } : { runOut: false, fundedMs: fundedCallMs(org) };

/** The funding of a call's interpretation now (test mode is never limited). */
export async function callFunding(db: Knex, payer: Payer): Promise<CallFunding> {
  if (!isLive(payer)) return { runOut: false, fundedMs: null };
  return fundingOf(await getOrganization(db, payer.orgId));
}

/**
 * Charges seconds of call interpretation (live mode) and says what the balance still pays for. Calls
 * are not reserved: the room stops interpreting once the balance has run out.
 */
export async function chargeCallSeconds(db: Knex, payer: Payer, callId: string, seconds: number): Promise<CallFunding> {
  if (!isLive(payer) || seconds <= 0) return callFunding(db, payer);
  const terms = await organizationTerms(db, payer.orgId);
  return fundingOf(await bookCallSeconds(db, payer.orgId, callId, seconds, -voiceCostMicros(terms, seconds)));
}

/**
 * Adds (or, negative, takes) credit on a prepaid balance in the caller's transaction; an invoiced
 * organization has no balance to credit (409).
 */
export async function creditBalance(
  trx: Knex.Transaction,
  orgId: string,
  amountMicros: number,
  reference: string,
): Promise<OrganizationRow> {
  const org = await trx<OrganizationRow>('organizations').where({ id: orgId }).forUpdate().first();
  if (!org) throw errors.notFound('organization');
  if (org.balance_micros === null) throw errors.conflict('the organization is invoiced and has no prepaid balance to credit');
  return bookEntry(trx, { orgId, mode: 'live', kind: 'credit', quantity: 0, amountMicros, reference, appId: null });
}
