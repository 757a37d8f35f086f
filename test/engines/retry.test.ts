import { describe, expect, it } from 'vitest';
import { EngineError } from '../../src/translation/engine.js';
import { parseRetryAfter, UpstreamStatusError, withRetries } from '../../src/translation/engines/retry.js';
import { engineFailure } from './helpers.js';

function recorder() {
  const sleeps: number[] = [];
  return { sleeps, sleep: async (ms: number) => void sleeps.push(ms) };
}

describe('withRetries', () => {
  it('backs off exponentially (200 ms, 400 ms) on 5xx and returns the first success', async () => {
    const { sleeps, sleep } = recorder();
    let calls = 0;
    const result = await withRetries(
      async () => {
        calls += 1;
        if (calls < 3) throw new UpstreamStatusError(502, 'bad gateway');
        return 'ok';
      },
      { engine: 'x', maxRetries: 2, timeoutMs: 1_000, sleep },
    );
    expect(result).toBe('ok');
    expect(calls).toBe(3);
    expect(sleeps).toEqual([200, 400]);
  });

  it('honours Retry-After, but never waits longer than 5 s', async () => {
    const { sleeps, sleep } = recorder();
    const error = await engineFailure(
      withRetries(
        async () => {
          throw new UpstreamStatusError(429, 'slow down', sleeps.length === 0 ? 1_500 : 60_000);
        },
        { engine: 'x', maxRetries: 2, timeoutMs: 1_000, sleep },
      ),
      'x',
    );
    expect(sleeps).toEqual([1_500, 5_000]);
    expect(error.message).toBe('x answered 429 after 3 attempts: slow down');
  });

  it('does not retry other 4xx', async () => {
    const { sleeps, sleep } = recorder();
    let calls = 0;
    const error = await engineFailure(
      withRetries(
        async () => {
          calls += 1;
          throw new UpstreamStatusError(404, 'no such thing');
        },
        { engine: 'x', maxRetries: 2, timeoutMs: 1_000, sleep },
      ),
      'x',
    );
    expect(calls).toBe(1);
    expect(sleeps).toEqual([]);
    expect(error.message).toBe('x answered 404 after 1 attempt: no such thing');
  });

  it('passes EngineErrors from the attempt through without retrying', async () => {
    let calls = 0;
    const failure = new EngineError('x', 'bad answer');
    await expect(
      withRetries(
        async () => {
          calls += 1;
          throw failure;
        },
        { engine: 'x', maxRetries: 2, timeoutMs: 1_000 },
      ),
    ).rejects.toBe(failure);
    expect(calls).toBe(1);
  });

  it('gives every attempt its own timeout signal', async () => {
    const signals: AbortSignal[] = [];
    const error = await engineFailure(
      withRetries(
        (signal) =>
          new Promise((_, reject) => {
            signals.push(signal);
            signal.addEventListener('abort', () => reject(signal.reason));
          }),
        { engine: 'x', maxRetries: 1, timeoutMs: 50, baseDelayMs: 1 },
      ),
      'x',
    );
    expect(signals).toHaveLength(2);
    expect(signals[0]).not.toBe(signals[1]);
    expect(error.message).toBe('x did not answer within 0.05 s (2 attempts)');
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2_000);
    expect(parseRetryAfter('0.5')).toBe(500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
