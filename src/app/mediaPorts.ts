// The media core's ports (src/calls/media/callStore.ts) on the database: calls' rows and events, and
// the prepaid balance through the money module.
import type { Knex } from 'knex';
import type { EventBus } from '../events/bus.js';
import { callFunding, chargeCallSeconds } from '../money/index.js';
import { announceBalanceExhausted, findCallById } from '../calls/calls.js';
import type { CallStore, Funding } from '../calls/media/callStore.js';

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
