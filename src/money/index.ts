// Money has one home: amounts and rounding, prices, the ledger, reservations (reserve, settle,
// release), call charges and credits. Nothing else computes a cost or writes a balance.
export { fromMicros, fromNullableMicros, toMicros } from './amounts.js';
export { listLedger, observeLedger, type LedgerFilter, type LedgerKind, type LedgerRowOut } from './ledger.js';
export { dailyUsage, usageWindowStart, USAGE_KINDS, type DailyUsage } from './usage.js';
export { callFunding, chargeCallSeconds, creditBalance, fundedPayer, type CallFunding } from './billing.js';
export {
  release,
  releaseOnFailure,
  releaseOrphanedHolds,
  reserve,
  reserveTogether,
  settle,
  type ChargeRefs,
  type Reservation,
} from './reservations.js';
