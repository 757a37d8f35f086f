// What the media core needs of the world outside it, as two narrow ports the composition root fills
// (src/app/mediaPorts.ts): the call's row and what its room announces, and the money a live call
// spends. The plane, its rooms and their billing hold no database handle.
import type { Payer } from '../../auth/principal.js';
import type { CallFunding } from '../../money/index.js';
import type { CallRow } from '../calls.js';

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
