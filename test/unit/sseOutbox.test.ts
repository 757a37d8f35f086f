// The event streams' outbox: what is queued reaches each stream in order and whole, at most one write per
// stream per interval, at once when the streams were quiet; a stream's own flush (before it ends) writes
// what it holds, and nothing is written to a stream that has ended. The clock is the test's.
import { describe, expect, it } from 'vitest';
import { StreamOutbox, type OutboxClock, type OutboxStream, type StreamTarget } from '../../src/http/sseOutbox.js';

/** A stream's socket, recording what it is written, and the stream's place in the outbox (`slot`). */
class Stream implements StreamTarget {
  readonly slot: OutboxStream;
  writes: string[] = [];
  buffers: Buffer[] = [];
  writableEnded = false;
  destroyed = false;
  writableNeedDrain = false;
  private drained: Array<() => void> = [];
  constructor(outbox: StreamOutbox, chunked = false) {
    this.slot = outbox.open(this, chunked);
  }
  write(bytes: Buffer) {
    this.writes.push(bytes.toString());
    this.buffers.push(bytes);
    return true;
  }
  once(_event: 'drain', listener: () => void) {
    this.drained.push(listener);
    return this;
  }
  /** The client read what filled the socket. */
  drain() {
    this.writableNeedDrain = false;
    for (const listener of this.drained.splice(0)) listener();
  }
}

function testClock() {
  let now = 1_000;
  const tick = (ms: number) => void (now += ms);
  const scheduled: Array<{ at: number; flush: () => void }> = [];
  const clock: OutboxClock = { now: () => now, later: (flush, ms) => void scheduled.push({ at: now + ms, flush }) };
  return {
    clock,
    scheduled,
    /** Time passing without anything running (a write's cost). */
    tick,
    /** Moves the clock to `to` and runs what is due by then, in order. */
    advanceTo(to: number) {
      now = to;
      for (let due = scheduled.findIndex((s) => s.at <= now); due !== -1; due = scheduled.findIndex((s) => s.at <= now)) {
        scheduled.splice(due, 1)[0]!.flush();
      }
    },
  };
}

describe('StreamOutbox', () => {
  it('writes a quiet stream at once, then gathers what comes within the interval into one write per stream', () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const [a, b] = [new Stream(outbox), new Stream(outbox)];
    outbox.write(a.slot, 'e1\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([1_000]); // at once: nothing was written lately
    time.advanceTo(1_000);
    expect(a.writes).toEqual(['e1\n\n']);

    outbox.write(a.slot, 'e2\n\n');
    outbox.write(b.slot, 'e2\n\n');
    outbox.write(a.slot, 'e3\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([1_050]); // one flush, one interval after the last
    time.advanceTo(1_049);
    expect(a.writes).toHaveLength(1);
    time.advanceTo(1_050);
    expect(a.writes).toEqual(['e1\n\n', 'e2\n\ne3\n\n']);
    expect(b.writes).toEqual(['e2\n\n']);

    time.advanceTo(2_000); // quiet again: the next write goes out at once
    outbox.write(b.slot, 'e4\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([2_000]);
  });

  it("flushes one stream's queue on demand, and writes nothing to a stream that ended", () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const [ending, gone, other] = [new Stream(outbox), new Stream(outbox), new Stream(outbox)];
    outbox.write(ending.slot, 'last\n\n');
    outbox.write(gone.slot, 'lost\n\n');
    outbox.write(other.slot, 'kept\n\n');
    outbox.close(ending.slot);
    expect(ending.writes).toEqual(['last\n\n']);
    gone.destroyed = true;
    time.advanceTo(1_000);
    expect(ending.writes).toEqual(['last\n\n']); // not twice
    expect(gone.writes).toEqual([]);
    expect(other.writes).toEqual(['kept\n\n']);
  });

  it('leaves a stream whose socket is full out of flushes until it drains, then writes what it gathered, in order', () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const [full, other] = [new Stream(outbox), new Stream(outbox)];
    full.writableNeedDrain = true;
    outbox.write(full.slot, 'e1\n\n');
    outbox.write(other.slot, 'e1\n\n');
    time.advanceTo(1_000);
    expect(other.writes).toEqual(['e1\n\n']);
    expect(full.writes).toEqual([]);
    outbox.write(full.slot, 'e2\n\n');
    time.advanceTo(1_050);
    expect(full.writes).toEqual([]); // still full: nothing more is handed to it
    expect(time.scheduled).toEqual([]); // and nothing is scheduled for it until it drains
    full.drain();
    expect(full.writes).toEqual([]); // not from the drain itself: at the next flush
    time.advanceTo(1_100);
    expect(full.writes.join('')).toBe('e1\n\ne2\n\n');
  });

  it('writes a full stream on demand (its last events before it ends), and forgets one that went away', () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const [ending, gone] = [new Stream(outbox), new Stream(outbox)];
    ending.writableNeedDrain = true;
    gone.writableNeedDrain = true;
    outbox.write(ending.slot, 'last\n\n');
    outbox.write(gone.slot, 'lost\n\n');
    time.advanceTo(1_000);
    outbox.close(ending.slot);
    expect(ending.writes).toEqual(['last\n\n']);
    gone.destroyed = true;
    outbox.write(gone.slot, 'more\n\n');
    time.advanceTo(1_050);
    expect(gone.writes).toEqual([]);
    gone.drain(); // a drain after the stream went away schedules a flush that finds nothing
    time.advanceTo(1_100);
    expect([ending.writes, gone.writes]).toEqual([['last\n\n'], []]);
  });

  it('encodes what several streams were sent alike once, and keeps apart what differs', () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const [a, b, c] = [new Stream(outbox), new Stream(outbox), new Stream(outbox)];
    for (const text of ['é1\n\n', 'e2\n\n']) for (const stream of [a, b, c]) outbox.write(stream.slot, text);
    outbox.write(c.slot, 'e3\n\n');
    time.advanceTo(1_000);
    expect(a.writes).toEqual(['é1\n\ne2\n\n']);
    expect(b.buffers[0]).toBe(a.buffers[0]);
    expect(c.writes).toEqual(['é1\n\ne2\n\ne3\n\n']);

    // The next interval starts afresh: a stream sent one text is written that text alone.
    outbox.write(b.slot, 'e4\n\n');
    time.advanceTo(1_050);
    expect(b.writes).toEqual(['é1\n\ne2\n\n', 'e4\n\n']);
    expect(a.writes).toHaveLength(1);
  });

  it("queues a group's text for each member, in order with what a member was sent alone", () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const [a, b, c] = [new Stream(outbox), new Stream(outbox), new Stream(outbox)];
    outbox.writeEach([a, b, c].map((s) => s.slot), 'e1\n\n');
    outbox.write(c.slot, ': heartbeat\n\n');
    outbox.writeEach(new Set([a, b, c].map((s) => s.slot)), 'e2\n\n');
    time.advanceTo(1_000);
    expect([a.writes, b.writes, c.writes]).toEqual([['e1\n\ne2\n\n'], ['e1\n\ne2\n\n'], ['e1\n\n: heartbeat\n\ne2\n\n']]);
    expect(b.buffers[0]).toBe(a.buffers[0]);
  });

  it('puts the next flush off when writing took more than a tenth of the interval, and comes back once it is cheap', () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const streams = Array.from({ length: 100 }, () => {
      const stream = new Stream(outbox);
      const write = stream.write.bind(stream);
      stream.write = (bytes) => (time.tick(0.25), write(bytes)); // 25 ms to write them all
      return stream;
    });
    for (const stream of streams) outbox.write(stream.slot, 'e1\n\n');
    // Two batches: the first at once (12.5 ms), the second halfway from its end to when the next flush is due.
    time.advanceTo(1_000);
    expect(time.scheduled.map((s) => s.at)).toEqual([1_031.25]);
    time.advanceTo(1_031.25);
    outbox.write(streams[0]!.slot, 'e2\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([1_250]); // 25 ms of 250: a tenth
    time.advanceTo(1_250);
    expect(streams[0]!.writes).toEqual(['e1\n\n', 'e2\n\n']);
    // That flush wrote one stream (0.25 ms): the interval is 50 ms again.
    outbox.write(streams[1]!.slot, 'e3\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([1_300]);
  });

  it('writes many streams in batches spread over the interval, and starts the next flush only after the last batch', () => {
    const time = testClock();
    const outbox = new StreamOutbox(60, time.clock);
    const streams = Array.from({ length: 125 }, () => new Stream(outbox));
    for (const stream of streams) outbox.write(stream.slot, 'e1\n\n');
    const written = () => streams.filter((stream) => stream.writes.length).length;
    time.advanceTo(1_000);
    expect(written()).toBe(50);
    expect(time.scheduled.map((s) => s.at)).toEqual([1_020]); // three batches: a third of the interval apart
    // What comes meanwhile waits for the flush under way to end, even for a stream it has written.
    outbox.write(streams[0]!.slot, 'e2\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([1_020]);
    time.advanceTo(1_020);
    expect(written()).toBe(100);
    expect(streams[0]!.writes).toHaveLength(1);
    expect(time.scheduled.map((s) => s.at)).toEqual([1_040]);
    // Late (a loaded machine): the last batch runs after the next flush was due, which then follows it.
    time.advanceTo(1_070);
    expect(written()).toBe(125);
    expect(streams[0]!.writes).toEqual(['e1\n\n', 'e2\n\n']);
    expect(streams.slice(1).every((stream) => stream.writes.length === 1)).toBe(true);
    expect(time.scheduled).toEqual([]);
  });

  it('puts the next flush off by at most MAX_INTERVAL_MS, however long writing took', () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const slow = new Stream(outbox);
    const write = slow.write.bind(slow);
    slow.write = (bytes) => (time.tick(100), write(bytes)); // a tenth would be a second
    outbox.write(slow.slot, 'e1\n\n');
    time.advanceTo(1_000);
    outbox.write(slow.slot, 'e2\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([1_250]);
  });

  it('ends a batch once it wrote BATCH_BYTES, and spreads the rest over the interval', () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const streams = Array.from({ length: 10 }, () => new Stream(outbox));
    outbox.writeEach(streams.map((s) => s.slot), 'x'.repeat(100 * 1024));
    const written = () => streams.filter((stream) => stream.writes.length).length;
    time.advanceTo(1_000);
    expect(written()).toBe(3); // 300 KiB: past the 256 KiB of a batch
    // Seven left, three batches, spread over the 50 ms until the next flush is due: 12.5 ms apart.
    expect(time.scheduled.map((s) => s.at)).toEqual([1_012.5]);
    time.advanceTo(1_012.5);
    expect(written()).toBe(6);
    time.advanceTo(1_100);
    expect(written()).toBe(10);
    expect(streams.every((s) => s.buffers[0] === streams[0]!.buffers[0])).toBe(true);
  });

  it('writes what a stream was sent when the flush began; what comes during the flush waits for the next one', () => {
    const time = testClock();
    const outbox = new StreamOutbox(60, time.clock);
    const streams = Array.from({ length: 100 }, () => new Stream(outbox));
    outbox.writeEach(streams.map((s) => s.slot), 'e1\n\n');
    time.advanceTo(1_000); // the first batch of 50
    outbox.writeEach(streams.map((s) => s.slot), 'e2\n\n');
    time.advanceTo(1_030); // the second batch: e1 alone, e2 is the next flush's
    expect(streams.every((s) => s.writes.join('') === 'e1\n\n')).toBe(true);
    time.advanceTo(1_060); // the next flush, in two batches
    time.advanceTo(1_090);
    expect(streams.every((s) => s.writes.join('') === 'e1\n\ne2\n\n')).toBe(true);
    expect(streams[99]!.buffers[1]).toBe(streams[0]!.buffers[1]); // one path again: one buffer for all
  });

  it('frames what it writes to a chunked stream as HTTP/1.1 chunks, once for the streams sent the same', () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const [a, b, plain] = [new Stream(outbox, true), new Stream(outbox, true), new Stream(outbox)];
    outbox.writeEach([a, b, plain].map((s) => s.slot), 'data: é\n\n');
    outbox.write(a.slot, ': heartbeat\n\n');
    time.advanceTo(1_000);
    expect(a.writes).toEqual(['17\r\ndata: é\n\n: heartbeat\n\n\r\n']); // 23 bytes: é is two
    expect(b.writes).toEqual(['a\r\ndata: é\n\n\r\n']);
    expect(plain.writes).toEqual(['data: é\n\n']);
    outbox.writeEach([a, b].map((s) => s.slot), 'e2\n\n');
    time.advanceTo(1_050);
    expect(a.buffers[1]).toBe(b.buffers[1]);
  });
});
