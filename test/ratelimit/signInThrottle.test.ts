// The sign-in slow-down on both rate-limit stores (memory for one instance, Redis for several): the
// delay doubles per refusal after the free ones, up to its ceiling, applies to failing addresses only,
// and counts every instance's refusals. Times are given, never waited for.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/ratelimit/memoryStore.js';
import { RedisRateLimitStore } from '../../src/ratelimit/redisStore.js';
import { SignInThrottle } from '../../src/ratelimit/signInThrottle.js';
import type { RateLimitStore } from '../../src/ratelimit/store.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test:signin:${randomUUID()}:`;
const SETTINGS = { freeFailures: 2, maxDelayMs: 4000, windowMs: 3600_000 };
/** A whole second, so each wait is exact. */
const T = 1_700_000_000_000;

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
/** Another instance's connection. */
const otherRedis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
afterAll(async () => {
  if (redis.status === 'ready') {
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length) await redis.del(...keys);
  }
  redis.disconnect();
  otherRedis.disconnect();
});

const stores: Array<[string, () => Promise<[RateLimitStore, RateLimitStore]>]> = [
  ['memory', async () => {
    const one = new MemoryRateLimitStore();
    return [one, one];
  }],
  ['Redis (two instances)', async () => {
    await Promise.all([redis.connect(), otherRedis.connect()]);
    return [new RedisRateLimitStore(redis, PREFIX), new RedisRateLimitStore(otherRedis, PREFIX)];
  }],
];

describe.each(stores)('SignInThrottle on the %s store', (_, make) => {
  it('doubles the wait per refusal after the free ones, up to the ceiling, for failing addresses only', async () => {
    const [a, b] = await make();
    const here = new SignInThrottle(a, SETTINGS);
    const there = new SignInThrottle(b, SETTINGS);
    expect(here.delayMs(1)).toBe(0);
    expect([2, 3, 4, 5].map((n) => here.delayMs(n))).toEqual([1000, 2000, 4000, 4000]);

    // Two refusals for the email from two addresses, on two instances.
    await here.refused('198.51.100.1', 'email', T);
    await there.refused('198.51.100.2', 'email', T);
    expect(await here.retryAfter('198.51.100.1', 'email', T)).toBe(1);
    expect(await there.retryAfter('198.51.100.2', 'email', T + 500)).toBe(1);
    // An address that has not been failing is never made to wait, nor a failing one for another email.
    expect(await here.retryAfter('203.0.113.9', 'email', T)).toBe(0);
    expect(await here.retryAfter('198.51.100.1', 'other', T)).toBe(0);
    expect(await here.retryAfter('198.51.100.1', 'email', T + 1000)).toBe(0);

    await there.refused('198.51.100.3', 'email', T + 1000);
    expect(await here.retryAfter('198.51.100.1', 'email', T + 1000)).toBe(2);
    for (let i = 4; i <= 6; i++) await here.refused(`198.51.100.${i}`, 'email', T + 2000);
    expect(await there.retryAfter('198.51.100.2', 'email', T + 2000)).toBe(4);
    // An hour after the newest refusal, none counts.
    expect(await here.retryAfter('198.51.100.1', 'email', T + 2000 + 3600_000)).toBe(0);
  });
});
