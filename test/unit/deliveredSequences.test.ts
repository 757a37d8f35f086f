import { describe, expect, it } from 'vitest';
import { DeliveredSequences } from '../../src/events/deliveredSequences.js';

describe('DeliveredSequences', () => {
  it('says once that an event is new, whichever way it comes, out of order too', () => {
    const delivered = new DeliveredSequences(10, () => 0);
    expect([13, 11, 13, 12, 11, 14].map((seq) => delivered.add(seq))).toEqual([true, true, false, true, false, true]);
  });

  it('asks the log for what came after the highest and for the numbers skipped below it', () => {
    const delivered = new DeliveredSequences(10, () => 0);
    expect(delivered.wanted()).toEqual({ after: 10, missing: [] });
    delivered.add(12);
    delivered.add(15);
    expect(delivered.wanted()).toEqual({ after: 15, missing: [11, 13, 14] });
    delivered.add(13);
    expect(delivered.wanted()).toEqual({ after: 15, missing: [11, 14] });
  });

  it('tells a stream whether an event it read from the log may still come (then it skips it)', () => {
    let now = 0;
    const delivered = new DeliveredSequences(10, () => now);
    delivered.add(12);
    expect([9, 10, 11, 12, 13].map((seq) => delivered.has(seq))).toEqual([true, true, false, true, false]);
    now = 60_000; // 11 given up: it may still come
    expect(delivered.has(11)).toBe(false);
    delivered.add(11);
    expect(delivered.has(11)).toBe(true);
  });

  it('delivers as heard what was stored before it began (it was never read from the log)', () => {
    const delivered = new DeliveredSequences(10, () => 0);
    expect([9, 9, 10].map((seq) => delivered.add(seq))).toEqual([true, true, true]);
    expect(delivered.wanted()).toEqual({ after: 10, missing: [] });
  });

  it('stops asking for a number after a minute (a rolled-back transaction never stores it), and still takes it once if it comes', () => {
    let now = 0;
    const delivered = new DeliveredSequences(0, () => now);
    delivered.add(2);
    now = 59_999;
    expect(delivered.wanted().missing).toEqual([1]);
    now = 60_000;
    expect(delivered.wanted().missing).toEqual([]);
    expect(delivered.add(1)).toBe(true);
    expect(delivered.add(1)).toBe(false);
  });

  it('keeps at most a thousand missing numbers, the newest', () => {
    const delivered = new DeliveredSequences(0, () => 0);
    delivered.add(5_000);
    const { missing } = delivered.wanted();
    expect(missing).toHaveLength(1_000);
    expect(missing[0]).toBe(4_000);
    expect(missing.at(-1)).toBe(4_999);
  });
});
