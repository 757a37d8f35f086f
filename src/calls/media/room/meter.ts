// The billing clock of one live call: how long interpretation has run, when seconds are due to be
// charged, and when a prepaid balance is spent. Pure: every method takes the time, so the rules are
// tested with a fake clock and no sockets.
//
// Rules:
// - Interpretation time accrues while at least one direction is interpreting.
// - Whole seconds are charged every interval; when interpretation stops, and when the balance is
//   spent, the started last second is charged too, and its unused part is kept as a negative
//   remainder, so no second is ever charged twice.
// - A prepaid balance pays for a known amount of interpretation: the moment it is used up, the
//   started second is charged at once rather than at the next interval, so a call overdraws by one
//   started second at most.
// - While interpretation is stopped for want of money, the balance is checked once per interval.

export interface MeterCharge {
  seconds: number;
}

export class CallMeter {
  private runningSince: number | null = null;
  /** Interpreted time not charged yet; negative after a started second was charged in advance. */
  private unbilledMs = 0;
  private lastChargeAt: number;
  /** Interpreted time (on this meter's scale) at which the known balance is spent; null: unlimited. */
  private fundedUntilMs: number | null = null;
  private lastFundingCheckAt = Number.NEGATIVE_INFINITY;

  constructor(
    now: number,
    private readonly intervalMs: () => number,
  ) {
    this.lastChargeAt = now;
  }

  get running(): boolean {
    return this.runningSince !== null;
  }

  /** Interpretation started or stopped (any direction interpreting counts). */
  setRunning(running: boolean, now: number): void {
    if (running && this.runningSince === null) this.runningSince = now;
    else if (!running && this.runningSince !== null) {
      this.unbilledMs += now - this.runningSince;
      this.runningSince = null;
    }
  }

  /** Interpreted time not charged yet, up to `now`. */
  unbilled(now: number): number {
    return this.unbilledMs + (this.runningSince === null ? 0 : now - this.runningSince);
  }

  /** The balance pays for `fundedMs` more of interpretation from now (null: nothing limits it). */
  fund(fundedMs: number | null, now: number): void {
    this.fundedUntilMs = fundedMs === null ? null : this.unbilled(now) + fundedMs;
  }

  /** What is due at `now`: the spent balance's started second at once, else whole seconds per interval. */
  tick(now: number): MeterCharge | null {
    if (this.fundedUntilMs !== null && this.unbilled(now) >= this.fundedUntilMs) {
      this.fundedUntilMs = null;
      this.lastChargeAt = now;
      return this.take(now, true);
    }
    if (now - this.lastChargeAt >= this.intervalMs()) {
      this.lastChargeAt = now;
      return this.take(now, false);
    }
    return null;
  }

  /** Everything interpreted so far, the started second included (interpretation stopped, call over). */
  settle(now: number): MeterCharge | null {
    this.fundedUntilMs = null;
    return this.take(now, true);
  }

  /** A charge failed: its seconds are charged later. */
  refund(charge: MeterCharge): void {
    this.unbilledMs += charge.seconds * 1000;
  }

  /** Interpretation is stopped for want of money: whether it is time to look at the balance again. */
  fundingCheckDue(now: number): boolean {
    if (now - this.lastFundingCheckAt < this.intervalMs()) return false;
    this.lastFundingCheckAt = now;
    return true;
  }

  private take(now: number, startedSecond: boolean): MeterCharge | null {
    if (this.runningSince !== null) {
      this.unbilledMs += now - this.runningSince;
      this.runningSince = now;
    }
    const seconds = startedSecond ? Math.ceil(this.unbilledMs / 1000) : Math.floor(this.unbilledMs / 1000);
    if (seconds <= 0) return null;
    this.unbilledMs -= seconds * 1000;
    return { seconds };
  }
}
