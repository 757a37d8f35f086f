// Money has one home: amounts and rounding, prices, the ledger, reservations (reserve, settle,
// release), call charges and credits. Nothing else computes a cost or writes a balance.
export { formatMicros, fromMicros, fromNullableMicros, toMicros } from './amounts.js';
export { chargeCallSeconds, creditBalance, fundedPayer } from './billing.js';
export type { LedgerEntry, LedgerKind } from './ledger.js';
export { availableMicros, balanceRunOut, fundedCallMs, type UsageKind } from './prices.js';
export {
  HOLD_MAX_AGE_MS,
  release,
  releaseOnFailure,
  releaseOrphanedHolds,
  reserve,
  settle,
  type Billed,
  type ChargeRefs,
  type Reservation,
} from './reservations.js';
