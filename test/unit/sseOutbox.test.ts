// The event streams' outbox: what is queued reaches each stream in order and whole, at most one write per
// stream per interval, at once when the streams were quiet; a stream's own flush (before it ends) writes
// what it holds, and nothing is written to a stream that has ended. The clock is the test's.
import { describe, expect, it } from 'vitest';
import { StreamOutbox, type OutboxClock, type StreamTarget } from '../../src/http/sseOutbox.js';

class Stream implements StreamTarget {
  writes: string[] = [];
  writableEnded = false;
  destroyed = false;
  write(text: string) {
    this.writes.push(text);
    return true;
  }
}

function testClock() {
  let now = 1_000;
  const scheduled: Array<{ at: number; flush: () => void }> = [];
  const clock: OutboxClock = { now: () => now, later: (flush, ms) => void scheduled.push({ at: now + ms, flush }) };
  return {
    clock,
    scheduled,
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
    const [a, b] = [new Stream(), new Stream()];
    outbox.write(a, 'e1\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([1_000]); // at once: nothing was written lately
    time.advanceTo(1_000);
    expect(a.writes).toEqual(['e1\n\n']);

    outbox.write(a, 'e2\n\n');
    outbox.write(b, 'e2\n\n');
    outbox.write(a, 'e3\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([1_050]); // one flush, one interval after the last
    time.advanceTo(1_049);
    expect(a.writes).toHaveLength(1);
    time.advanceTo(1_050);
    expect(a.writes).toEqual(['e1\n\n', 'e2\n\ne3\n\n']);
    expect(b.writes).toEqual(['e2\n\n']);

    time.advanceTo(2_000); // quiet again: the next write goes out at once
    outbox.write(b, 'e4\n\n');
    expect(time.scheduled.map((s) => s.at)).toEqual([2_000]);
  });

  it("flushes one stream's queue on demand, and writes nothing to a stream that ended", () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const [ending, gone, other] = [new Stream(), new Stream(), new Stream()];
    outbox.write(ending, 'last\n\n');
    outbox.write(gone, 'lost\n\n');
    outbox.write(other, 'kept\n\n');
    outbox.flush(ending);
    expect(ending.writes).toEqual(['last\n\n']);
    gone.destroyed = true;
    time.advanceTo(1_000);
    expect(ending.writes).toEqual(['last\n\n']); // not twice
    expect(gone.writes).toEqual([]);
    expect(other.writes).toEqual(['kept\n\n']);
  });

  it('writes many streams a batch per turn, so other work runs between batches', () => {
    const time = testClock();
    const outbox = new StreamOutbox(50, time.clock);
    const streams = Array.from({ length: 250 }, () => new Stream());
    for (const stream of streams) outbox.write(stream, 'e\n\n');
    const written = () => streams.filter((stream) => stream.writes.length).length;
    time.scheduled.shift()!.flush();
    expect(written()).toBe(100);
    time.scheduled.shift()!.flush();
    expect(written()).toBe(200);
    time.scheduled.shift()!.flush();
    expect(written()).toBe(250);
    expect(time.scheduled).toEqual([]);
  });
});
