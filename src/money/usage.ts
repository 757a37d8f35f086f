// Usage per day and kind, from the ledger: what the console's chart draws.
import type { Knex } from 'knex';
import type { Mode } from '../auth/principal.js';
import { fromMicros } from './amounts.js';
import type { UsageKind } from './prices.js';

export const USAGE_KINDS: readonly UsageKind[] = ['text', 'voice_message', 'call'];

export interface DailyUsage {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  kind: UsageKind;
  /** Characters (text) or seconds (voice messages, calls). */
  quantity: number;
  /** What it cost, in the balance's units (0 in test mode). */
  cost: number;
}

const DAY_MS = 86_400_000;

/** The first instant (UTC midnight) of the `days` days that end with the day of `nowMs`. */
export const usageWindowStart = (nowMs: number, days: number) => new Date(Math.floor(nowMs / DAY_MS) * DAY_MS - (days - 1) * DAY_MS);

/** Charges of the organization in `mode` over the last `days` UTC days (today included), per day and kind. */
export async function dailyUsage(db: Knex, orgId: string, mode: Mode, days: number, nowMs: number): Promise<DailyUsage[]> {
  const rows: { day: string; kind: UsageKind; quantity: string | number; micros: string | number }[] = await db('ledger_entries')
    .where({ org_id: orgId, mode })
    .whereIn('kind', USAGE_KINDS as UsageKind[])
    .where('created_at', '>=', usageWindowStart(nowMs, days))
    .groupByRaw('1, 2')
    .orderByRaw('1, 2')
    .select(
      db.raw(`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day`),
      'kind',
      db.raw('sum(quantity) as quantity'),
      db.raw('-sum(amount_micros) as micros'),
    );
  return rows.map((row) => ({ day: row.day, kind: row.kind, quantity: Number(row.quantity), cost: fromMicros(Number(row.micros)) }));
}
