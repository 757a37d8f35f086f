// The media core's ports (src/calls/media/callStore.ts) on the database: calls' rows and events, the
// prepaid balance through the money module, and transcripts.
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { EventBus } from '../events/bus.js';
import { callFunding, chargeCallSeconds } from '../money/index.js';
import { announceBalanceExhausted, findCallById } from '../calls/calls.js';
import type { CallRecords, CallStore, Funding } from '../calls/media/callStore.js';
import { storeUtterances, transcriptReady, type CallUtterance } from '../calls/transcripts.js';
import { KeyedBatches } from '../db/keyedBatches.js';
import { addRoomStats } from '../calls/callStats.js';

export function storedCalls(deps: { db: Knex; events: EventBus }): CallStore {
  return {
    findCall: (callId) => findCallById(deps.db, callId),
    announceBalanceExhausted: (call) => announceBalanceExhausted(deps, call),
  };
}

export function ledgerFunding(db: Knex): Funding {
  return {
    funding: (payer) => callFunding(db, payer),
    charge: (payer, callId, seconds) => chargeCallSeconds(db, payer, callId, seconds),
  };
}

/** Utterances stored in one statement at most. */
const UTTERANCES_BATCH_MAX = 64;
/**
 * How long a completed utterance waits for others before its statement starts. On the embedded database
 * a statement costs more than the rows in it (measured, CPU of every thread per utterance: 1.2 ms one to
 * a statement, 0.9 ms three, 0.5 ms eight, 0.4 ms thirty-two; docs/performance.md); 200 live calls
 * complete about 130 a second, which 20 ms gathered three to a statement and 100 ms about seven. A tenth
 * of a second is short beside a turn of speech (seconds), and nothing is announced before it is stored
 * (the event follows the commit), so what a client was told is kept; the listener's caption is not held:
 * it left when the turn ended.
 */
const UTTERANCES_GATHER_MS = 100;
/** All utterances go through one queue (../db/keyedBatches.ts): one statement in flight, whatever the call. */
const UTTERANCES = 'utterances';

/**
 * Transcripts: each call's utterances are stored in the order the media plane hands them over (so their
 * ids and events follow the conversation), and the transcript is ready after the last. Utterances of
 * any calls go together: those that complete within the gathering time, and those handed over while a
 * statement is in flight, in the next; so with many live calls they cost a statement per group, not one
 * each, and when the database falls behind the backlog (whose work, kept across collections, was
 * promoted to the old generation) drains at once.
 */
export function storedRecords(deps: { db: Knex; events: EventBus; logger: Logger }): CallRecords {
  const utterances = new KeyedBatches<CallUtterance, void>(
    async (batch) => {
      await storeUtterances(deps, batch);
      return batch.map(() => undefined);
    },
    UTTERANCES_BATCH_MAX,
    UTTERANCES_GATHER_MS,
  );
  const queues = new Map<string, Promise<void>>();
  const inTurn = (callId: string, what: string, work: () => Promise<void>): Promise<void> => {
    const next = (queues.get(callId) ?? Promise.resolve()).then(work).catch((err) => deps.logger.error({ err, call_id: callId }, `media: could not store ${what}`));
    queues.set(callId, next);
    void next.then(() => {
      if (queues.get(callId) === next) queues.delete(callId);
    });
    return next;
  };
  return {
    utterance: (call, utterance) => {
      const stored = utterances.submit(UTTERANCES, { call, utterance });
      // Its failure is logged in the call's turn, which may come after it has failed.
      stored.catch(() => undefined);
      return inTurn(call.id, 'an utterance', () => stored);
    },
    stats: (call, stats) => inTurn(call.id, 'what its room counted', () => addRoomStats(deps.db, call.id, stats)),
    ended: (callId) => inTurn(callId, 'that the transcript is ready', async () => void (await transcriptReady(deps, callId))),
  };
}
