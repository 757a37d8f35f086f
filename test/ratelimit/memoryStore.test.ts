import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryRateLimitStore } from '../../src/ratelimit/memoryStore.js';
import { rateLimitStoreContract, T0, W } from './storeContract.js';

rateLimitStoreContract('MemoryRateLimitStore', () => new MemoryRateLimitStore({ sweepIntervalMs: 0 }));

describe('MemoryRateLimitStore', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sweep() removes keys whose hits have all left the window', async () => {
    const s = new MemoryRateLimitStore({ sweepIntervalMs: 0 });
    await s.hit('a', 5, W, T0);
    await s.hit('b', 5, W, T0 + 10);
    await s.hit('c', 5, W, T0 + 30_000);
    await s.hit('d', 5, 1000, T0); // shorter window: idle after 1 s
    expect(s.size).toBe(4);

    expect(s.sweep(T0 + 999)).toBe(0);
    expect(s.sweep(T0 + 1000)).toBe(1);
    expect(s.sweep(T0 + W - 1)).toBe(0);
    expect(s.sweep(T0 + W)).toBe(1); // a
    expect(s.size).toBe(2);
    expect(s.sweep(T0 + W + 10)).toBe(1); // b
    expect(s.sweep(T0 + 30_000 + W)).toBe(1); // c
    expect(s.size).toBe(0);

    // A swept key starts afresh.
    expect(await s.hit('a', 5, W, T0 + 2 * W)).toMatchObject({ allowed: true, remaining: 4 });
    await s.close();
  });

  it('sweeps periodically on an unref-ed timer that close() stops', async () => {
    vi.useFakeTimers({ now: T0 });
    const s = new MemoryRateLimitStore({ sweepIntervalMs: 10_000 });
    expect(vi.getTimerCount()).toBe(1);
    await s.hit('a', 5, W); // at T0 via the (faked) clock
    vi.advanceTimersByTime(W - 10_000);
    expect(s.size).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(s.size).toBe(0);
    await s.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not keep the process alive', async () => {
    const s = new MemoryRateLimitStore({ sweepIntervalMs: 1000 });
    expect((s as unknown as { timer: NodeJS.Timeout }).timer.hasRef()).toBe(false);
    await s.close();
  });

  it('bounds per-key memory by the limit', async () => {
    const s = new MemoryRateLimitStore({ sweepIntervalMs: 0 });
    const entries = (s as unknown as { entries: Map<string, { ts: Float64Array }> }).entries;
    for (let i = 0; i < 5000; i++) await s.hit('k', 600, W, T0 + i * 50);
    expect(entries.get('k')!.ts.length).toBe(600);
    await s.hit('small', 3, W, T0);
    expect(entries.get('small')!.ts.length).toBeLessThanOrEqual(3);
    await s.close();
  });

  it('keeps nothing for keys that were only peeked at', async () => {
    const s = new MemoryRateLimitStore({ sweepIntervalMs: 0 });
    for (let i = 0; i < 100; i++) await s.peek(`guess-${i}`, 30, W, T0);
    expect(s.size).toBe(0);
    await s.close();
  });
});
