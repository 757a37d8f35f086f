// What event streams write, gathered per stream and written at once. With a thousand streams open, every
// event costs a thousand socket writes (and as many reads by the clients); under a load of posts that
// alone fills the machine. So the streams are written at most once per interval (50 ms): a quiet
// stream's event goes out at once (after this turn's I/O), while under load the events published in
// the interval reach each stream in one write, and an event waits at most one interval longer.
import { performance } from 'node:perf_hooks';

/** The part of a response the outbox writes to. */
export interface StreamTarget {
  write(text: string): unknown;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
}

export interface OutboxClock {
  now(): number;
  /** Runs `flush` after `ms` milliseconds; with 0, after the I/O of this turn. */
  later(flush: () => void, ms: number): void;
}

const realClock: OutboxClock = {
  now: () => performance.now(),
  later: (flush, ms) => void (ms > 0 ? setTimeout(flush, ms) : setImmediate(flush)),
};

/** Streams written in one turn of the event loop. */
const FLUSH_BATCH = 100;

export class StreamOutbox {
  private readonly gathered = new Map<StreamTarget, string>();
  private flushScheduled = false;
  private lastFlushAt = -Infinity;

  constructor(
    private readonly intervalMs = 50,
    private readonly clock: OutboxClock = realClock,
  ) {}

  /** Queues `text` for `target`; it is written, in order, at the next flush. */
  write(target: StreamTarget, text: string): void {
    this.gathered.set(target, (this.gathered.get(target) ?? '') + text);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    this.clock.later(() => this.flushAll(), Math.max(0, this.lastFlushAt + this.intervalMs - this.clock.now()));
  }

  /** Writes what `target` has queued now (before it is ended, so its last events are not lost). */
  flush(target: StreamTarget): void {
    const text = this.gathered.get(target);
    if (text === undefined) return;
    this.gathered.delete(target);
    if (!target.writableEnded && !target.destroyed) target.write(text);
  }

  private flushAll(): void {
    this.flushScheduled = false;
    this.lastFlushAt = this.clock.now();
    this.flushSome([...this.gathered.keys()], 0);
  }

  /** A thousand writes at once would hold up every other request: they go a batch per turn. */
  private flushSome(targets: StreamTarget[], from: number): void {
    const to = Math.min(targets.length, from + FLUSH_BATCH);
    for (let i = from; i < to; i++) this.flush(targets[i]!);
    if (to < targets.length) this.clock.later(() => this.flushSome(targets, to), 0);
  }
}

/** The outbox of every event stream of this process. */
export const streamOutbox = new StreamOutbox();
