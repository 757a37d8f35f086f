// Reservations: a billable request whose cost is known before the work (text: the characters an engine
// must translate; voice: the seconds) holds that cost atomically before calling the engine, and is
// refused (402) when the available balance (balance - held) cannot cover it. Afterwards the hold is
// settled (ledger row and balance change, in the transaction that stores what was paid for) or
// released (failure, refusal). So concurrent requests never spend the same money, and a prepaid
// balance never goes below zero through text or voice.
//
// A hold is not a ledger row: the balance stays the sum of the ledger, `held_micros` is the sum of the
// organization's `balance_holds`. Each hold names the server instance running its request; when that
// instance dies, its holds are released (src/deployment/instances.ts).
import type { Knex } from 'knex';
import { isLive, type Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import type { OrganizationRow, OrganizationTerms } from '../db/organizations.js';
import { formatMicros } from './amounts.js';
import { entryOfRequest, insertLedgerEntry } from './ledger.js';
import { availableMicros, costMicros, type Rates, type UsageKind } from './prices.js';

/** A request that runs longer than this lost its hold: it is settled only if the balance still covers it. */
export const HOLD_MAX_AGE_MS = 15 * 60 * 1000;

export interface Reservation {
  readonly payer: Payer;
  readonly kind: UsageKind;
  /** Characters or seconds, and their cost; both 0 in test mode (nothing is billed). */
  readonly quantity: number;
  readonly costMicros: number;
  /** The hold row; null when nothing is held (test mode, an invoiced organization, nothing to pay). */
  readonly holdId: number | null;
  /** A prepaid balance pays: settling changes it. */
  readonly prepaid: boolean;
  /** The rates the hold was priced at; a settlement of another quantity is priced at them too. */
  readonly rates: Rates;
}

/** What a settled reservation charged: the ledger row's figures (0 when nothing was billed). */
export interface Billed {
  quantity: number;
  costMicros: number;
}

export interface ChargeRefs {
  /** What the charge pays for: `message <id>`, `translate ...`. */
  reference: string;
  /** The request's Idempotency-Key reference: a retry after a crash is charged once. */
  requestRef: string | null;
  /** The installed app whose request is charged (named on the ledger row), or null. */
  appId: string | null;
}

/** One part of what a request holds: `quantity` units of `kind`. */
export interface HoldPart {
  kind: UsageKind;
  quantity: number;
}

/**
 * Holds the cost of `quantity` units of `kind` for `payer`: one conditional UPDATE of the balance (it
 * succeeds only while balance - held covers the cost) and the hold row, in one statement. Test mode,
 * invoiced organizations and free work hold nothing and are never refused.
 */
export async function reserve(
  db: Knex,
  instanceId: string,
  payer: Payer,
  org: OrganizationTerms,
  kind: UsageKind,
  quantity: number,
): Promise<Reservation> {
  const [reservation] = await reserveTogether(db, instanceId, payer, org, [{ kind, quantity }]);
  return reservation!;
}

/**
 * Holds several parts at once, all or none, in one statement: a request that needs them all (a voice
 * message's seconds and its transcript's translation) never holds one part while the money for the
 * other goes to a concurrent request. One reservation per part, settled or released on its own.
 */
export async function reserveTogether(
  db: Knex,
  instanceId: string,
  payer: Payer,
  org: OrganizationTerms,
  parts: HoldPart[],
): Promise<Reservation[]> {
  const live = isLive(payer);
  const { prepaid } = org;
  const rates = { text_rate_micros: org.text_rate_micros, voice_rate_micros: org.voice_rate_micros };
  const priced = parts.map(({ kind, quantity }) => ({
    payer,
    kind,
    quantity: live ? quantity : 0,
    costMicros: live ? costMicros(org, kind, quantity) : 0,
    prepaid,
    rates,
    holdId: null as number | null,
  }));
  const held = priced.filter((part) => part.costMicros > 0);
  if (!live || !prepaid || !held.length) return priced;
  const total = held.reduce((sum, part) => sum + part.costMicros, 0);
  const { rows } = await db.raw<{ rows: Array<{ id: number; amount_micros: number }> }>(
    `WITH held AS (
       UPDATE organizations SET held_micros = held_micros + CAST(:total AS bigint)
       WHERE id = :org AND balance_micros IS NOT NULL AND balance_micros - held_micros >= CAST(:total AS bigint)
       RETURNING id
     )
     INSERT INTO balance_holds (org_id, amount_micros, instance_id)
     SELECT held.id, part.amount, :instance FROM held, unnest(CAST(:amounts AS bigint[])) AS part(amount)
     RETURNING id, amount_micros`,
    { total, org: org.id, instance: instanceId, amounts: `{${held.map((part) => part.costMicros).join(',')}}` },
  );
  if (!rows.length) throw await refusal(db, org.id, total);
  // Each part takes a hold of its own amount (parts of equal cost are interchangeable).
  const unclaimed = [...rows];
  for (const part of held) {
    const at = unclaimed.findIndex((row) => Number(row.amount_micros) === part.costMicros);
    part.holdId = unclaimed.splice(at, 1)[0]!.id;
  }
  return priced;
}

/** 402 naming the cost and what the organization has available now. */
async function refusal(db: Knex, orgId: string, cost: number) {
  const org = (await db<OrganizationRow>('organizations').where({ id: orgId }).first())!;
  const available = Math.max(availableMicros(org) ?? 0, 0);
  return errors.insufficientBalance(formatMicros(cost, org.currency), formatMicros(available, org.currency));
}

/**
 * Charges a reservation in the caller's transaction, the one that stores what it pays for: the hold
 * goes, the ledger row and the balance change come. `quantity` is what the work turned out to use
 * (default: what was held); what it costs beyond the hold must be covered by the available balance. A request that already has its charge (a retry
 * after a crash) is not charged again; that charge is returned. Should the hold have been lost (the
 * request outlived HOLD_MAX_AGE_MS, or its instance was taken for dead), the charge is made only if
 * the available balance still covers it, else 402 and the caller's transaction rolls back.
 */
export async function settle(
  trx: Knex.Transaction,
  reservation: Reservation,
  refs: ChargeRefs,
  quantity: number = reservation.quantity,
): Promise<Billed> {
  const { payer } = reservation;
  if (!isLive(payer)) return { quantity: 0, costMicros: 0 };
  const cost = quantity === reservation.quantity ? reservation.costMicros : costMicros(reservation.rates, reservation.kind, quantity);
  const held = await takeHold(trx, reservation.holdId);
  const earlier = await entryOfRequest(trx, refs.requestRef);
  if (earlier || quantity === 0) {
    if (held > 0) await updateBalance(trx, payer.orgId, 0, held);
    return earlier ? { quantity: earlier.quantity, costMicros: -earlier.amount_micros } : { quantity: 0, costMicros: 0 };
  }
  const { entry, inserted } = await insertLedgerEntry(trx, {
    orgId: payer.orgId,
    mode: payer.mode,
    kind: reservation.kind,
    quantity,
    amountMicros: -cost,
    reference: refs.reference,
    requestRef: refs.requestRef,
    appId: refs.appId,
  });
  const charged = inserted ? cost : 0;
  if (reservation.prepaid && (charged !== 0 || held > 0)) {
    if (!(await updateBalance(trx, payer.orgId, charged, held))) throw await refusal(trx, payer.orgId, charged);
  }
  return { quantity: entry.quantity, costMicros: -entry.amount_micros };
}

/** Deletes a hold in the caller's transaction; returns the amount it held (0 when already gone). */
async function takeHold(trx: Knex.Transaction, holdId: number | null): Promise<number> {
  if (holdId === null) return 0;
  const [gone] = await trx('balance_holds').where({ id: holdId }).del().returning('amount_micros');
  return gone ? Number(gone.amount_micros) : 0;
}

/**
 * Charges `charged` and frees `held` on a prepaid balance. Anything charged beyond what was held must
 * be covered by what is available, so the balance never goes below zero through a reservation.
 */
async function updateBalance(trx: Knex.Transaction, orgId: string, charged: number, held: number): Promise<boolean> {
  const beyondHold = charged - held;
  const updated = await trx('organizations')
    .where({ id: orgId })
    .whereNotNull('balance_micros')
    .andWhereRaw('(CAST(? AS bigint) <= 0 OR balance_micros - held_micros >= CAST(? AS bigint))', [beyondHold, beyondHold])
    .update({
      balance_micros: trx.raw('balance_micros - ?', [charged]),
      held_micros: trx.raw('held_micros - ?', [held]),
    });
  return updated > 0;
}

/** Gives held money back (the work failed or was refused). Holds already settled are no longer there. */
export async function release(db: Knex, reservations: Reservation[]): Promise<void> {
  const ids = reservations.map((r) => r.holdId).filter((id): id is number => id !== null);
  if (!ids.length) return;
  await releaseHoldsWhere(db, `id IN (${ids.map(() => '?').join(', ')})`, ids);
}

/**
 * Runs the work that settles `reservations`; when it fails, releases them and rethrows. A release that
 * fails itself (the database is gone) leaves the holds to the dead-instance and age rules.
 */
export async function releaseOnFailure<T>(db: Knex, reservations: Reservation[], work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    await release(db, reservations).catch(() => undefined);
    throw err;
  }
}

/**
 * Releases the holds of requests that cannot settle any more: their instance is not alive (crashed, or
 * stopped), or they are older than HOLD_MAX_AGE_MS. With `soleInstance` (a single-process database)
 * every other instance is dead, whatever its lease says.
 */
export async function releaseOrphanedHolds(db: Knex, options: { soleInstance?: string } = {}): Promise<number> {
  const alive = options.soleInstance
    ? { sql: 'instance_id <> ?', bindings: [options.soleInstance] }
    : {
        sql: 'NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = balance_holds.instance_id AND i.expires_at >= now())',
        bindings: [],
      };
  return releaseHoldsWhere(db, `${alive.sql} OR created_at < now() - make_interval(secs => ?)`, [
    ...alive.bindings,
    HOLD_MAX_AGE_MS / 1000,
  ]);
}

/** Deletes the matching holds and takes their amounts off `held_micros`, in one statement. */
async function releaseHoldsWhere(db: Knex, where: string, bindings: unknown[]): Promise<number> {
  const { rows } = await db.raw<{ rows: Array<{ released: number }> }>(
    `WITH gone AS (
       DELETE FROM balance_holds WHERE ${where} RETURNING org_id, amount_micros
     ), per_org AS (
       SELECT org_id, sum(amount_micros) AS amount, count(*) AS holds FROM gone GROUP BY org_id
     ), freed AS (
       UPDATE organizations o SET held_micros = o.held_micros - per_org.amount
       FROM per_org WHERE o.id = per_org.org_id
       RETURNING per_org.holds
     )
     SELECT coalesce(sum(holds), 0)::int AS released FROM freed`,
    bindings as Knex.RawBinding[],
  );
  return rows[0]?.released ?? 0;
}
