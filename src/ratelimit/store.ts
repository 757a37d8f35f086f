/**
 * Rolling-window (exact sliding log) rate limiting.
 *
 * A hit at time `t` occupies a slot of the window until `t + windowMs`
 * (exclusive): at `nowMs === t + windowMs` it no longer counts. At most
 * `limit` accepted hits lie inside any window of length `windowMs`; there are
 * no fixed window boundaries, so bursts straddling a boundary cannot double up.
 */
export interface RateLimitResult {
  /** Whether this hit was accepted (and counted); for a peek, whether a hit would be. */
  allowed: boolean;
  /** The limit the hit was checked against. */
  limit: number;
  /** Slots still free in the current window after this hit (0 when rejected). */
  remaining: number;
  /** Unix epoch seconds (rounded up) when the window is entirely clear again. */
  resetAtSeconds: number;
  /** Integer >= 1 when !allowed: seconds (rounded up) until one slot frees; 0 otherwise. */
  retryAfterSeconds: number;
}

export interface RateLimitStore {
  /**
   * Record a hit for `key` if fewer than `limit` accepted hits lie in the
   * rolling window of `windowMs` ending at `nowMs` (default: current time).
   * A rejected hit is not counted.
   */
  hit(key: string, limit: number, windowMs: number, nowMs?: number): Promise<RateLimitResult>;
  /**
   * What a hit at `nowMs` would get, without recording anything: `allowed` says whether a slot is
   * free, `remaining` how many are, `retryAfterSeconds` when one frees up if none is.
   */
  peek(key: string, limit: number, windowMs: number, nowMs?: number): Promise<RateLimitResult>;
  /** Release timers / connections owned by the store. */
  close?(): Promise<void>;
}

/** Throws a RangeError unless limit is a positive integer and windowMs a positive finite number. */
export function assertLimitArgs(limit: number, windowMs: number, nowMs?: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(`rate limit must be a positive integer, got ${limit}`);
  }
  if (!Number.isFinite(windowMs) || windowMs <= 0) {
    throw new RangeError(`rate limit window must be a positive number of ms, got ${windowMs}`);
  }
  if (nowMs !== undefined && !Number.isFinite(nowMs)) {
    throw new RangeError(`nowMs must be a finite number, got ${nowMs}`);
  }
}

/**
 * Builds the result from the window state after the hit.
 * `blockingHitMs` is the timestamp of the hit whose expiry frees a slot (the
 * oldest one when the window holds exactly `limit` hits); `newestMs` the
 * newest accepted hit still in the window.
 */
export function buildResult(
  allowed: boolean,
  limit: number,
  count: number,
  windowMs: number,
  nowMs: number,
  blockingHitMs: number,
  newestMs: number,
): RateLimitResult {
  return {
    allowed,
    limit,
    remaining: allowed ? Math.max(0, limit - count) : 0,
    resetAtSeconds: count > 0 ? Math.ceil((newestMs + windowMs) / 1000) : Math.ceil(nowMs / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((blockingHitMs + windowMs - nowMs) / 1000)),
  };
}
