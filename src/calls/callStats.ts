// `stats` of an ended call (DESIGN.md §12): what its rooms counted (stored as each closes, and the room
// still open here counted until now), and what the ledger charged for it.
import type { Knex } from 'knex';
import type { components } from '../generated/api.js';
import { emptyMediaStats, mergeMediaStats, percentile, type MediaStatsSnapshot } from './mediaStats.js';

/** What the stats are read from: the call's row (./calls.ts imports this module, so not its type). */
interface CountedCall {
  id: string;
  status: 'open' | 'ended';
  media_stats: MediaStatsSnapshot | null;
}

export type CallStats = components['schemas']['CallStats'];

/** How the call went in its room on this instance so far, if it has one here (the media plane answers). */
export type LiveCallStats = (callId: string) => MediaStatsSnapshot | undefined;

/** Adds what a closing room counted to what the call's earlier rooms did. */
export async function addRoomStats(db: Knex, callId: string, stats: MediaStatsSnapshot): Promise<void> {
  await db.transaction(async (trx) => {
    const row = await trx<CountedCall>('calls').where({ id: callId }).forUpdate().first('media_stats');
    if (!row) return;
    const merged = mergeMediaStats(row.media_stats ?? emptyMediaStats(), stats);
    await trx('calls').where({ id: callId }).update({ media_stats: JSON.stringify(merged) });
  });
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** The call's stats: null while it is open. */
export async function callStats(db: Knex, call: CountedCall, live?: LiveCallStats): Promise<CallStats | null> {
  if (call.status !== 'ended') return null;
  const here = live?.(call.id);
  const counted = here ? mergeMediaStats(call.media_stats ?? emptyMediaStats(), here) : (call.media_stats ?? emptyMediaStats());
  const [{ micros }] = await db('ledger_entries').where({ kind: 'call', reference: call.id }).sum({ micros: 'amount_micros' });
  const latency = (samples: number[]) => ({ p50: percentile(samples, 50), p95: percentile(samples, 95), turns: samples.length });
  return {
    seconds_present: { agent: seconds(counted.present_ms.agent), customer: seconds(counted.present_ms.customer) },
    seconds_interpreted: { agent: seconds(counted.interpreted_ms.agent), customer: seconds(counted.interpreted_ms.customer) },
    amount_charged: -Number(micros ?? 0) / 1e6 || 0,
    latency_ms: { agent_to_customer: latency(counted.latency_ms.agent), customer_to_agent: latency(counted.latency_ms.customer) },
    frames_dropped: counted.frames_dropped,
  };
}
