// The tests' own waiting (test/support/waiting.ts): no deadline, and nothing left polling after its test.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pendingWaits, stopPendingWaits, waitUntil } from '../support/waiting.js';

describe('waiting in tests', () => {
  afterEach(() => vi.useRealTimers());

  it('waits as long as it takes, however much time passes, and names what it waits for meanwhile', async () => {
    vi.useFakeTimers();
    let ready = false;
    let checks = 0;
    const waited = waitUntil(() => (checks++, ready), 'the thing');
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(pendingWaits()).toEqual(['the thing']);
    ready = true;
    await vi.advanceTimersByTimeAsync(10);
    await waited;
    expect(pendingWaits()).toEqual([]);
    expect(checks).toBeGreaterThan(1);
  });

  it('fails with what the check threw', async () => {
    await expect(waitUntil(() => Promise.reject(new Error('broken')), 'x')).rejects.toThrow('broken');
    expect(pendingWaits()).toEqual([]);
  });

  it('stops a wait whose test is over: the check is not asked again', async () => {
    vi.useFakeTimers();
    let checks = 0;
    void waitUntil(() => (checks++, false), 'never');
    await vi.advanceTimersByTimeAsync(50);
    stopPendingWaits();
    const asked = checks;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(checks).toBe(asked);
    expect(pendingWaits()).toEqual([]);
  });
});
