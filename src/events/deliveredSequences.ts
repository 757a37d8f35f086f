// Which stored events this instance has delivered to its streams, by their place in the log (`seq`),
// so that an event reaching it twice (through Redis and read from the log after Redis was away) is
// delivered once, and so that a read of the log asks only for what was not delivered.
//
// Sequence numbers are taken when an event is stored and published after its transaction commits, so
// they arrive out of order, and some never arrive (a rolled-back transaction leaves its number unused).
// Numbers below the highest delivered that have not arrived are `missing` and are read again from the
// log; after GAP_MS one is given up (`skipped`): it is still delivered should it come, but no longer read
// for. Bounded: at most MAX_MISSING missing and MAX_SKIPPED skipped numbers are kept.

/** How long a number below the highest delivered is waited for: longer than any transaction that stores events takes to commit and publish. */
const GAP_MS = 60_000;
/** How long a given-up number is remembered as not delivered. */
const SKIPPED_MS = 10 * 60_000;
const MAX_MISSING = 1_000;
const MAX_SKIPPED = 10_000;

/** What a read of the log must bring: every event after `after`, and the `missing` ones below it. */
export interface WantedEvents {
  after: number;
  missing: number[];
}

export class DeliveredSequences {
  /** Numbers up to this one were stored before this instance followed the log: it delivers them as heard. */
  private readonly floor: number;
  private highest: number;
  /** Not delivered, below `highest`: when each was first missed (oldest first). */
  private readonly missing = new Map<number, number>();
  /** Given up after GAP_MS: when each was given up (oldest first). */
  private readonly skipped = new Map<number, number>();

  constructor(
    /** The last event stored when this instance began to follow the log. */
    start: number,
    private readonly now: () => number = Date.now,
  ) {
    this.floor = start;
    this.highest = start;
  }

  /** Records `seq` as delivered; false when it was delivered already. */
  add(seq: number): boolean {
    if (seq <= this.floor) return true;
    const now = this.now();
    this.expire(now);
    if (seq > this.highest) {
      for (let missed = Math.max(this.highest + 1, seq - MAX_MISSING); missed < seq; missed++) this.missing.set(missed, now);
      this.highest = seq;
      this.trim(now);
      return true;
    }
    return this.missing.delete(seq) || this.skipped.delete(seq);
  }

  /** Whether `seq` was delivered, or will not be (stored before this instance followed the log); false while it may come. */
  has(seq: number): boolean {
    if (seq <= this.floor) return true;
    return seq <= this.highest && !this.missing.has(seq) && !this.skipped.has(seq);
  }

  /** What a read of the log must bring to deliver everything stored since. */
  wanted(): WantedEvents {
    this.expire(this.now());
    return { after: this.highest, missing: [...this.missing.keys()].sort((a, b) => a - b) };
  }

  private expire(now: number): void {
    for (const [seq, since] of this.missing) {
      if (now - since < GAP_MS) break;
      this.missing.delete(seq);
      this.skipped.set(seq, now);
    }
    for (const [seq, since] of this.skipped) {
      if (now - since < SKIPPED_MS && this.skipped.size <= MAX_SKIPPED) break;
      this.skipped.delete(seq);
    }
  }

  private trim(now: number): void {
    for (const seq of this.missing.keys()) {
      if (this.missing.size <= MAX_MISSING) break;
      this.missing.delete(seq);
      this.skipped.set(seq, now);
    }
    this.expire(now);
  }
}
