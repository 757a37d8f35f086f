import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisRateLimitStore } from '../../src/ratelimit/redisStore.js';
import { waitUntil } from '../support/waiting.js';
import { rateLimitStoreContract } from './storeContract.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Random per run, so parallel runs on one Redis never collide. */
const PREFIX = `test:ratelimit:${randomUUID()}:`;
const W = 60_000;
const T0 = 1_700_000_040_000;

const clients: Redis[] = [];
const newClient = () => {
  const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 5000, lazyConnect: true });
  clients.push(c);
  return c;
};

let client: Redis;
let storeSeq = 0;

beforeAll(async () => {
  client = newClient();
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    throw new Error(`Redis not reachable at ${REDIS_URL} (set TEST_REDIS_URL): ${String(err)}`);
  }
});

afterAll(async () => {
  if (client?.status === 'ready') {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
  await Promise.all(clients.map((c) => (c.status === 'end' ? undefined : c.quit().catch(() => c.disconnect()))));
});

// A fresh prefix per store, so each contract test starts empty.
rateLimitStoreContract('RedisRateLimitStore', () => new RedisRateLimitStore(client, `${PREFIX}${storeSeq++}:`));

describe('RedisRateLimitStore', () => {
  it('shares limits between instances (separate connections, same prefix)', async () => {
    const prefix = `${PREFIX}shared:`;
    const a = new RedisRateLimitStore(client, prefix);
    const other = newClient();
    await other.connect();
    const b = new RedisRateLimitStore(other, prefix);

    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).hit('k', 25, W, T0 + (i % 3))),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(25);
    expect(await b.hit('k', 25, W, T0 + 10)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('stores one sorted-set member per accepted hit and expires idle keys', async () => {
    const prefix = `${PREFIX}ttl:`;
    const s = new RedisRateLimitStore(client, prefix);
    await s.hit('k', 2, W);
    await s.hit('k', 2, W); // same millisecond, likely: members must still be unique
    await s.hit('k', 2, W); // rejected, not stored
    expect(await client.zcard(`${prefix}k`)).toBe(2);
    // On Redis's own clock the key lives exactly until its newest hit leaves the window.
    const ttl = await client.pttl(`${prefix}k`);
    expect(ttl).toBeGreaterThan(W - 5000);
    expect(ttl).toBeLessThanOrEqual(W);

    // Expiry is real Redis time; check it actually goes away with a short window.
    await s.hit('short', 5, 50);
    await waitUntil(async () => (await client.exists(`${prefix}short`)) === 0, 'the 50 ms key expires');
  });

  it("on a caller's clock, keeps a key a window longer than its newest hit needs, and a rejected hit does not extend it", async () => {
    const prefix = `${PREFIX}callerClock:`;
    const s = new RedisRateLimitStore(client, prefix);
    await s.hit('k', 2, W, T0);
    await s.hit('k', 2, W, T0); // same timestamp: members must still be unique
    await s.hit('k', 2, W, T0 + 1); // rejected, not stored
    expect(await client.zcard(`${prefix}k`)).toBe(2);
    const ttl = await client.pttl(`${prefix}k`);
    expect(ttl).toBeGreaterThan(2 * W - 5000);
    expect(ttl).toBeLessThanOrEqual(2 * W);

    // A rejected hit 30 s later does not extend the key's life past its newest hit + window (+ the window's slack).
    await s.hit('k', 2, W, T0 + 30_000);
    const ttl2 = await client.pttl(`${prefix}k`);
    expect(ttl2).toBeGreaterThan(W + 30_000 - 5000);
    expect(ttl2).toBeLessThanOrEqual(W + 30_000);
  });

  it('close() leaves a caller-owned client open, and quits it when asked to', async () => {
    const own = newClient();
    await own.connect();
    const quit = vi.spyOn(own, 'quit');

    await new RedisRateLimitStore(own, PREFIX).close();
    expect(quit).not.toHaveBeenCalled();
    expect(await own.ping()).toBe('PONG');

    await new RedisRateLimitStore(own, PREFIX, { quitClientOnClose: true }).close();
    expect(quit).toHaveBeenCalledTimes(1);
  });
});
