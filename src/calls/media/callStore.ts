// What the media core needs of the world outside it, as narrow ports the composition root fills
// (src/app/mediaPorts.ts): the call's row and what its room announces, the money a live call spends,
// and where its transcript goes. The plane, its rooms and their billing hold no database handle.
import type { Payer } from '../../auth/principal.js';
import type { CallFunding } from '../../money/index.js';
import type { CallRow } from '../calls.js';
import type { Utterance } from '../utterance.js';
import type { MediaStatsSnapshot } from '../mediaStats.js';

export type { Utterance };

export interface CallStore {
  /** The call as stored now; undefined when there is no such call. */
  findCall(callId: string): Promise<CallRow | undefined>;
  /** Tells the organization (event and webhook) that the call's interpretation stopped for want of balance. */
  announceBalanceExhausted(call: CallRow): Promise<void>;
}

export interface Funding {
  /** What the payer's balance pays for now. */
  funding(payer: Payer): Promise<CallFunding>;
  /** Charges seconds of interpretation once; answers what the balance pays for after it. */
  charge(payer: Payer, callId: string, seconds: number): Promise<CallFunding>;
}

/**
 * Where the call's record goes (the transcript), filled by the composition root: the media plane hands
 * over each utterance as it completes, so a crash loses at most the turn in progress.
 */
export interface CallRecords {
  /** Keeps a completed utterance; a call's utterances are kept in the order they are handed over. Never rejects. */
  utterance(call: CallRow, utterance: Utterance): Promise<void>;
  /** What a room of the call counted, as it closes (added to what its earlier rooms counted). Never rejects. */
  stats(call: CallRow, stats: MediaStatsSnapshot): Promise<void>;
  /** The call ended and its room here, if there was one, has handed over its last utterance. Never rejects. */
  ended(callId: string): Promise<void>;
}
