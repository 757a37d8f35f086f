import { hash, randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { assertLimitArgs, buildResult, type RateLimitResult, type RateLimitStore } from './store.js';

/**
 * KEYS[1] sorted set of accepted hits (score = ms timestamp, member unique)
 * ARGV[1] limit, ARGV[2] windowMs, ARGV[3] nowMs ('' = use the Redis server clock), ARGV[4] member
 * ('' = only look: record nothing)
 * Returns { allowed (0|1), count after the hit, blocking hit score, newest score, now } (scores as strings).
 */
const HIT_SCRIPT = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local callersClock = ARGV[3] ~= ''
local now
if not callersClock then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[3])
end
local function fmt(n) return string.format('%.17g', n) end

redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - window))
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  allowed = 1
  if ARGV[4] ~= '' then
    redis.call('ZADD', key, fmt(now), ARGV[4])
    count = count + 1
  end
end
if count == 0 then
  return { allowed, 0, '', '', fmt(now) }
end
local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]
-- the hit whose expiry brings the count below the limit
local idx = count - limit
if idx < 0 then idx = 0 end
local blocking = redis.call('ZRANGE', key, idx, idx, 'WITHSCORES')[2]
-- keep the key until its newest hit leaves the window: exactly, on Redis's clock; a window longer on a
-- caller's clock, which Redis's expiry does not follow (a clock ahead of Redis's, or a test's synthetic
-- one, would otherwise find hits still in its window already expired)
local ttl = math.ceil(tonumber(newest) + window - now)
if callersClock then ttl = ttl + window end
if ttl < 1 then ttl = 1 end
redis.call('PEXPIRE', key, ttl)
return { allowed, count, blocking, newest, fmt(now) }
`;

const HIT_SCRIPT_SHA = hash('sha1', HIT_SCRIPT, 'hex');

export interface RedisRateLimitStoreOptions {
  /** If true, close() also quits the Redis client (default false: the caller owns it). */
  quitClientOnClose?: boolean;
}

/**
 * Exact sliding-window limiter shared by every server instance using the same
 * Redis and key prefix. One sorted set per key, updated atomically by a Lua
 * script. When hit() gets no nowMs the Redis server clock is used, so
 * instances with skewed clocks still agree.
 */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly instanceId = randomBytes(6).toString('hex');
  private seq = 0;

  constructor(
    private readonly client: Redis | Cluster,
    private readonly keyPrefix: string = 'ratelimit:',
    private readonly options: RedisRateLimitStoreOptions = {},
  ) {}

  async hit(key: string, limit: number, windowMs: number, nowMs?: number): Promise<RateLimitResult> {
    return this.run(key, limit, windowMs, nowMs, `${this.instanceId}:${(this.seq++).toString(36)}`);
  }

  async peek(key: string, limit: number, windowMs: number, nowMs?: number): Promise<RateLimitResult> {
    return this.run(key, limit, windowMs, nowMs, '');
  }

  /** Runs the script; `member` names the hit to record, '' records nothing. */
  private async run(key: string, limit: number, windowMs: number, nowMs: number | undefined, member: string): Promise<RateLimitResult> {
    assertLimitArgs(limit, windowMs, nowMs);
    const args = [String(limit), String(windowMs), nowMs === undefined ? '' : String(nowMs), member];
    const redisKey = this.keyPrefix + key;

    let reply: unknown;
    try {
      reply = await this.client.evalsha(HIT_SCRIPT_SHA, 1, redisKey, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      reply = await this.client.eval(HIT_SCRIPT, 1, redisKey, ...args);
    }

    const [allowed, count, blocking, newest, now] = reply as [number, number, string, string, string];
    const nowNum = Number(now);
    return buildResult(
      allowed === 1,
      limit,
      count,
      windowMs,
      nowNum,
      blocking === '' ? nowNum : Number(blocking),
      newest === '' ? nowNum : Number(newest),
    );
  }

  /** Forgets all hits for `key`. */
  async reset(key: string): Promise<void> {
    await this.client.del(this.keyPrefix + key);
  }

  async close(): Promise<void> {
    if (this.options.quitClientOnClose) await this.client.quit();
  }
}
