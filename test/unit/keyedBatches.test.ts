// Writes grouped per key while one of the key's batches is in flight (src/db/keyedBatches.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyedBatches } from '../../src/db/keyedBatches.js';

/** A write whose batches finish only when the test says so: what it was asked, in order. */
function gatedWrite(fail?: (items: string[]) => Error | undefined) {
  const calls: string[][] = [];
  const gates: Array<() => void> = [];
  const write = async (items: string[]) => {
    calls.push(items);
    await new Promise<void>((resolve) => gates.push(resolve));
    const error = fail?.(items);
    if (error) throw error;
    return items.map((item) => `stored ${item}`);
  };
  /** Lets the oldest batch in flight finish, then waits until the next one (if any) has begun. */
  const finishOne = async () => {
    const open = gates.shift()!;
    open();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { calls, write, finishOne };
}

const refused = (code: string) => Object.assign(new Error(`refused (${code})`), { code });

describe('KeyedBatches', () => {
  it('writes an idle key at once, and what arrives meanwhile as one batch, in order', async () => {
    const { calls, write, finishOne } = gatedWrite();
    const batches = new KeyedBatches(write, 10);
    const results = ['a', 'b', 'c', 'd'].map((item) => batches.submit('session 1', item));
    expect(calls).toEqual([['a']]);
    await finishOne();
    expect(calls).toEqual([['a'], ['b', 'c', 'd']]);
    await finishOne();
    expect(await Promise.all(results)).toEqual(['stored a', 'stored b', 'stored c', 'stored d']);
    // Idle again: the next one goes alone, at once.
    const later = batches.submit('session 1', 'e');
    expect(calls.at(-1)).toEqual(['e']);
    await finishOne();
    expect(await later).toBe('stored e');
  });

  describe('with a gathering time', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("holds an idle key's first item that long, for the others to join it; then what comes in flight goes next, at once", async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { calls, write, finishOne } = gatedWrite();
      const batches = new KeyedBatches(write, 10, 50);
      const results = [batches.submit('all', 'a'), batches.submit('all', 'b')];
      expect(calls).toEqual([]);
      vi.advanceTimersByTime(49);
      results.push(batches.submit('all', 'c'));
      expect(calls).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(calls).toEqual([['a', 'b', 'c']]);
      results.push(batches.submit('all', 'd'));
      await finishOne();
      expect(calls).toEqual([['a', 'b', 'c'], ['d']]);
      await finishOne();
      expect(await Promise.all(results)).toEqual(['stored a', 'stored b', 'stored c', 'stored d']);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('starts at once when a full batch has gathered', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { calls, write, finishOne } = gatedWrite();
      const batches = new KeyedBatches(write, 2, 50);
      const results = [batches.submit('all', 'a'), batches.submit('all', 'b'), batches.submit('all', 'c')];
      expect(calls).toEqual([['a', 'b']]);
      expect(vi.getTimerCount()).toBe(0);
      await finishOne();
      expect(calls.at(-1)).toEqual(['c']);
      await finishOne();
      expect(await Promise.all(results)).toEqual(['stored a', 'stored b', 'stored c']);
    });
  });

  it('keeps keys apart and batches at most maxBatch items', async () => {
    const { calls, write, finishOne } = gatedWrite();
    const batches = new KeyedBatches(write, 2);
    const results = [batches.submit('s1', 'a'), batches.submit('s2', 'x'), batches.submit('s1', 'b'), batches.submit('s1', 'c'), batches.submit('s1', 'd')];
    expect(calls).toEqual([['a'], ['x']]);
    await finishOne();
    expect(calls.at(-1)).toEqual(['b', 'c']);
    await finishOne();
    await finishOne();
    expect(calls.at(-1)).toEqual(['d']);
    await finishOne();
    expect(await Promise.all(results)).toEqual(['stored a', 'stored x', 'stored b', 'stored c', 'stored d']);
  });

  it('writes a batch the database refused again one item at a time, so only the refused item fails', async () => {
    const { calls, write, finishOne } = gatedWrite((items) => (items.includes('bad') ? refused('23505') : undefined));
    const batches = new KeyedBatches(write, 10);
    const results = ['a', 'b', 'bad', 'c'].map((item) => batches.submit('s', item).catch((error: Error) => error.message));
    await finishOne(); // a
    await finishOne(); // b, bad, c: refused
    await finishOne(); // b
    await finishOne(); // bad
    await finishOne(); // c
    expect(calls).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
    expect(await Promise.all(results)).toEqual(['stored a', 'stored b', 'refused (23505)', 'stored c']);
  });

  it('passes any other failure to every item of the batch, without writing them again', async () => {
    const lost = Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
    const { calls, write, finishOne } = gatedWrite((items) => (items.length > 1 ? lost : undefined));
    const batches = new KeyedBatches(write, 10);
    const results = ['a', 'b', 'c'].map((item) => batches.submit('s', item).catch((error: Error) => error.message));
    await finishOne();
    await finishOne();
    expect(calls).toEqual([['a'], ['b', 'c']]);
    expect(await Promise.all(results)).toEqual(['stored a', 'connection lost', 'connection lost']);
  });
});
