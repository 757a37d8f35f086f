// What event streams write, gathered per stream and written at once. With a thousand streams open, every
// event costs a thousand socket writes (and as many reads by the clients); under a load of posts that
// alone fills the machine. So the streams are written at most once per interval (50 ms): a quiet
// stream's event goes out at once (after this turn's I/O), while under load the events published in
// the interval reach each stream in one write, and an event waits at most one interval longer (longer
// when writing the streams takes more than a tenth of the time: MAX_FLUSH_SHARE, up to MAX_INTERVAL_MS).
// Streams that were sent the same texts in the same order (every stream of an organization, under a
// load of its events) are written the same bytes, joined, encoded and framed once rather than once per
// stream.
// A flush takes what each stream was sent when it begins, and writes it in batches spread over the
// interval (at most FLUSH_BATCH streams and BATCH_BYTES bytes each), not in one burst: a burst of a
// thousand writes, and the thousand reads it wakes in the clients, took the machine from the requests
// for tens of milliseconds every interval. What is sent meanwhile waits for the next flush.
// A stream whose client has not read what it was sent (its socket is full) is not written more: what it
// is sent waits here, and it is written at the first flush after its socket drained. Node would keep the
// bytes itself and write them from the drain, and a thousand clients reading at once would drain a
// thousand sockets in one turn of the event loop, outside the outbox's batches.
import { performance } from 'node:perf_hooks';

/** Where the outbox writes a stream's bytes: its response, or the response's socket. */
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

/** Streams written in one turn of the event loop, at most. */
const FLUSH_BATCH = 50;
/**
 * Bytes written in one turn of the event loop: a batch ends once it wrote this many. Under a load of
 * events each stream is written many at once, and fifty streams of a hundred kilobytes each held the
 * event loop for tens of milliseconds.
 */
const BATCH_BYTES = 256 * 1024;
/**
 * The share of the time between two flushes that writing may take: a flush that took longer (many
 * streams, each a socket write) puts the next one off, so under load each stream is written less often,
 * with more at a time, and what each write costs, whatever its size, is paid less often.
 */
const MAX_FLUSH_SHARE = 0.1;
/**
 * The longest time between two flushes. Writing the bytes themselves takes as long however they are
 * gathered: past this, a longer interval would only hold the events back longer (and each flush, with
 * more to write, would put the next one off further).
 */
const MAX_INTERVAL_MS = 250;

/**
 * What a stream was sent: a path of texts in a tree all streams share, so that streams sent the same
 * texts in the same order stand on the same node. Each text is kept encoded, as it was queued (an
 * event's text is encoded once for all the streams it is queued for): a path's bytes are copied
 * together, and framed as an HTTP/1.1 chunk, once however many streams are written them.
 */
class Gathered {
  private readonly next = new Map<string, Gathered>();
  private joined: Buffer | undefined;
  private framed: Buffer | undefined;

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

  /** The bytes of the path's texts, joined. */
  bytes(): Buffer {
    if (!this.joined) {
      const parts: Buffer[] = [];
      for (let node: Gathered = this; node.parent; node = node.parent) parts.push(node.encoded);
      this.joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts.reverse());
    }
    return this.joined;
  }

  /** The same bytes as one chunk of a chunked HTTP/1.1 body (RFC 9112, 7.1). */
  chunk(): Buffer {
    if (!this.framed) {
      const bytes = this.bytes();
      this.framed = Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`, 'latin1'), bytes, CRLF]);
    }
    return this.framed;
  }
}

const CRLF = Buffer.from('\r\n', 'latin1');
const pathStart = () => new Gathered(null, Buffer.alloc(0));

/** One stream's place in the outbox: where it is written, and what waits for it. */
export class OutboxStream {
  /** What it was sent since a flush last took its texts; null when nothing. */
  path: Gathered | null = null;
  /** What flushes took and have not written yet (its batch has not come, or its socket is full). */
  taken: Buffer[] = [];
  /** Left out of flushes until its socket drains. */
  awaitingDrain = false;
  /** Ended: nothing more is written to it. */
  closed = false;

  constructor(
    readonly target: StreamTarget,
    /** The target is the socket of a response with a chunked body: it is written framed chunks. */
    readonly chunked: boolean,
  ) {}

  /** Moves what it was sent to what waits to be written. */
  take(): void {
    if (this.path === null) return;
    this.taken.push(this.chunked ? this.path.chunk() : this.path.bytes());
    this.path = null;
  }

  /** Writes what was taken; the bytes written. */
  writeTaken(): number {
    const { target, taken } = this;
    this.taken = [];
    if (target.writableEnded || target.destroyed) return 0;
    let written = 0;
    for (const bytes of taken) {
      target.write(bytes);
      written += bytes.length;
    }
    return written;
  }
}

export class StreamOutbox {
  /** Where the paths of this interval start; a new one at each flush. */
  private start = pathStart();
  /** Streams sent something since the last flush began, or drained since (one listed twice finds nothing the second time). */
  private waiting: OutboxStream[] = [];
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

  /**
   * A stream written through this outbox. `chunked`: the target is the socket of a response whose body
   * is chunked (HTTP/1.1), and the outbox frames the chunks: a thousand streams sent the same events are
   * written one framed buffer, where their responses would each frame (and copy) it.
   */
  open(target: StreamTarget, chunked = false): OutboxStream {
    return new OutboxStream(target, chunked);
  }

  /** Queues `text` for `stream`; it is written, in order, at the next flush. */
  write(stream: OutboxStream, text: string): void {
    this.writeEach([stream], text);
  }

  /**
   * Queues `text` for each of `streams` (the members of a group, a thousand for one event): the
   * streams that stand on the same path (all of them, unless some were sent something else) are
   * moved along it once, not once each.
   */
  writeEach(streams: Iterable<OutboxStream>, text: string): void {
    const encoded = Buffer.from(text);
    let from: Gathered | null | undefined;
    let to: Gathered | undefined;
    for (const stream of streams) {
      if (stream.closed) continue;
      const at = stream.path;
      if (at !== from) to = (at ?? this.start).then(text, encoded);
      from = at;
      // A stream awaiting its drain joins the flushes again from the drain.
      if (at === null && !stream.awaitingDrain) this.waiting.push(stream);
      stream.path = to!;
    }
    this.scheduleFlush();
  }

  /** Writes what `stream` has queued now, full socket or not, and nothing after (its last events before it ends). */
  close(stream: OutboxStream): void {
    if (stream.closed) return;
    stream.take();
    stream.writeTaken();
    stream.closed = true;
  }

  /** The time between two flushes: the interval, or longer when the last flush's writes took more than their share. */
  private currentInterval(): number {
    return Math.min(MAX_INTERVAL_MS, Math.max(this.intervalMs, this.lastFlushMs / MAX_FLUSH_SHARE));
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

  /** A flush's write, the bytes written: none to a full socket, which is written at the first flush after it drained. */
  private flushUnlessFull(stream: OutboxStream): number {
    if (stream.closed || stream.awaitingDrain || !stream.taken.length) return 0;
    const { target } = stream;
    if (!target.writableNeedDrain || target.writableEnded || target.destroyed) return stream.writeTaken();
    stream.awaitingDrain = true;
    target.once('drain', () => {
      stream.awaitingDrain = false;
      if (stream.closed || (stream.path === null && !stream.taken.length)) return;
      this.waiting.push(stream);
      this.scheduleFlush();
    });
    return 0;
  }

  private flushAll(): void {
    this.flushScheduled = false;
    this.flushing = true;
    this.lastFlushAt = this.clock.now();
    this.flushingMs = 0;
    const streams = this.waiting;
    this.waiting = [];
    // What is sent from now on goes to the next flush, from paths of its own.
    this.start = pathStart();
    for (const stream of streams) stream.take();
    this.flushSome(streams, 0, this.lastFlushAt + this.currentInterval());
  }

  /**
   * A thousand writes at once would hold up every other request, and so would the thousand reads they
   * wake: the batches are spread evenly over the time left until the next flush is due (`dueAt`).
   */
  private flushSome(streams: OutboxStream[], from: number, dueAt: number): void {
    const began = this.clock.now();
    let next = from;
    for (let bytes = 0; next < streams.length && next - from < FLUSH_BATCH && bytes < BATCH_BYTES; next++) {
      bytes += this.flushUnlessFull(streams[next]!);
    }
    const now = this.clock.now();
    this.flushingMs += now - began;
    if (next < streams.length) {
      const batchesLeft = Math.ceil((streams.length - next) / (next - from));
      return this.clock.later(() => this.flushSome(streams, next, dueAt), Math.max(0, (dueAt - now) / (batchesLeft + 1)));
    }
    this.flushing = false;
    this.lastFlushMs = this.flushingMs;
    if (this.flushScheduled) this.flushLater();
  }
}

/** The outbox of every event stream of this process. */
export const streamOutbox = new StreamOutbox();
