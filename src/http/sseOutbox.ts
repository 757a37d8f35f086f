// What event streams write, gathered per stream and written at once. With a thousand streams open, every
// event costs a thousand socket writes (and as many reads by the clients); under a load of posts that
// alone fills the machine. So the streams are written at most once per interval (50 ms): a quiet
// stream's event goes out at once (after this turn's I/O), while under load the events published in
// the interval reach each stream in one write, and an event waits at most one interval longer (longer
// when writing the streams takes more than a tenth of the time: MAX_FLUSH_SHARE). Streams
// that were sent the same texts in the same order (every stream of an organization, under a load of its
// events) are written the same bytes, joined and encoded once rather than once per stream.
// A flush of many streams is spread over the interval in batches (FLUSH_BATCH), not written in one burst:
// a burst of a thousand writes, and the thousand reads it wakes in the clients, took the machine from the
// requests for tens of milliseconds every interval.
// A stream whose client has not read what it was sent (its socket is full) is not written more: what it
// is sent waits here, and it is written at the first flush after its socket drained. Node would keep the
// bytes itself and write them from the drain, and a thousand clients reading at once would drain a
// thousand sockets in one turn of the event loop, outside the outbox's batches.
import { performance } from 'node:perf_hooks';

/** The part of a response the outbox writes to. */
export interface StreamTarget {
  write(bytes: Buffer): unknown;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  /** The last write filled the socket: wait for 'drain' before writing more. */
  readonly writableNeedDrain: boolean;
  once(event: 'drain', listener: () => void): unknown;
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
const FLUSH_BATCH = 50;
/**
 * The share of the time between two flushes that writing may take: a flush that took longer (many
 * streams, each a socket write) puts the next one off, so under load each stream is written less often,
 * with more at a time, and the writes never take more than this share of the process.
 */
const MAX_FLUSH_SHARE = 0.1;

/**
 * What a stream was sent since its last write: a path of texts in a tree all streams share, so that
 * streams sent the same texts in the same order stand on the same node. Each text is kept encoded, as
 * it was queued (an event's text is encoded once for all the streams it is queued for): a path's bytes
 * are copied together, not encoded again for each batch of streams that stands on a path of its own.
 */
class Gathered {
  private readonly next = new Map<string, Gathered>();
  private joined: Buffer | undefined;

  constructor(
    private readonly parent: Gathered | null,
    private readonly encoded: Buffer,
  ) {}

  /** This path with `text` (its UTF-8 bytes: `encoded`) after it. */
  then(text: string, encoded: Buffer): Gathered {
    let node = this.next.get(text);
    if (!node) this.next.set(text, (node = new Gathered(this, encoded)));
    return node;
  }

  /** The bytes of the path's texts, joined (once, however many streams are written them). */
  bytes(): Buffer {
    if (!this.joined) {
      const parts: Buffer[] = [];
      for (let node: Gathered = this; node.parent; node = node.parent) parts.push(node.encoded);
      this.joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts.reverse());
    }
    return this.joined;
  }
}

const pathStart = () => new Gathered(null, Buffer.alloc(0));

export class StreamOutbox {
  /** Where the paths of this interval start; a new one after each flush. */
  private start = pathStart();
  private readonly gathered = new Map<StreamTarget, Gathered>();
  /** Streams left out of flushes until their sockets drain. */
  private readonly awaitingDrain = new Set<StreamTarget>();
  /** A flush is due (queued writes wait for it). */
  private flushScheduled = false;
  /** A flush is writing its batches. */
  private flushing = false;
  private lastFlushAt = -Infinity;
  /** Time the writes of the flush under way have taken so far, and of the last finished flush. */
  private flushingMs = 0;
  private lastFlushMs = 0;

  constructor(
    private readonly intervalMs = 50,
    private readonly clock: OutboxClock = realClock,
  ) {}

  /** Queues `text` for `target`; it is written, in order, at the next flush. */
  write(target: StreamTarget, text: string): void {
    this.writeEach([target], text);
  }

  /**
   * Queues `text` for each of `targets` (the members of a group, a thousand for one event): the
   * targets that stand on the same path (all of them, unless some were sent something else) are
   * moved along it once, not once each.
   */
  writeEach(targets: Iterable<StreamTarget>, text: string): void {
    const encoded = Buffer.from(text);
    let from: Gathered | undefined;
    let to: Gathered | undefined;
    for (const target of targets) {
      const at = this.gathered.get(target) ?? this.start;
      if (at !== from) to = (from = at).then(text, encoded);
      this.gathered.set(target, to!);
    }
    this.scheduleFlush();
  }

  /** Writes what `target` has queued now, full socket or not (before it is ended, so its last events are not lost). */
  flush(target: StreamTarget): void {
    const path = this.gathered.get(target);
    if (path === undefined) return;
    this.gathered.delete(target);
    this.awaitingDrain.delete(target);
    if (!target.writableEnded && !target.destroyed) target.write(path.bytes());
  }

  /** The time between two flushes: the interval, or longer when the last flush's writes took more than their share. */
  private currentInterval(): number {
    return Math.max(this.intervalMs, this.lastFlushMs / MAX_FLUSH_SHARE);
  }

  /** Flushes what is queued: one interval after the last flush began, or after the one under way ends. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    if (!this.flushing) this.flushLater();
  }

  private flushLater(): void {
    this.clock.later(() => this.flushAll(), Math.max(0, this.lastFlushAt + this.currentInterval() - this.clock.now()));
  }

  /** A flush's write: none to a full socket, which is written at the first flush after it drained. */
  private flushUnlessFull(target: StreamTarget): void {
    if (!target.writableNeedDrain || target.writableEnded || target.destroyed) return this.flush(target);
    if (this.awaitingDrain.has(target)) return;
    this.awaitingDrain.add(target);
    target.once('drain', () => {
      this.awaitingDrain.delete(target);
      this.scheduleFlush();
    });
  }

  private flushAll(): void {
    this.flushScheduled = false;
    this.flushing = true;
    this.lastFlushAt = this.clock.now();
    this.start = pathStart();
    this.flushingMs = 0;
    const targets = [...this.gathered.keys()];
    this.flushSome(targets, 0, this.currentInterval() / Math.ceil(targets.length / FLUSH_BATCH));
  }

  /**
   * A thousand writes at once would hold up every other request, and so would the thousand reads they
   * wake: the batches are spread over the interval, `paceMs` apart, the last one before the next flush.
   */
  private flushSome(targets: StreamTarget[], from: number, paceMs: number): void {
    const began = this.clock.now();
    const to = Math.min(targets.length, from + FLUSH_BATCH);
    for (let i = from; i < to; i++) this.flushUnlessFull(targets[i]!);
    this.flushingMs += this.clock.now() - began;
    if (to < targets.length) return this.clock.later(() => this.flushSome(targets, to, paceMs), paceMs);
    this.flushing = false;
    this.lastFlushMs = this.flushingMs;
    if (this.flushScheduled) this.flushLater();
  }
}

/** The outbox of every event stream of this process. */
export const streamOutbox = new StreamOutbox();
