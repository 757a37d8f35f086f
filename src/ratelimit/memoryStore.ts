import { assertLimitArgs, buildResult, type RateLimitResult, type RateLimitStore } from './store.js';

export interface MemoryRateLimitStoreOptions {
  /** How often idle keys are swept, in ms (default 60 000). 0 disables the timer; call sweep() yourself. */
  sweepIntervalMs?: number;
  /** Clock used when hit() gets no nowMs and by the periodic sweep (default Date.now). */
  now?: () => number;
}

/** Per-key ring buffer of the accepted hits still (possibly) in the window, oldest first. */
interface Entry {
  /** Capacity grows by doubling up to `limit`, so a key never holds more than `limit` timestamps. */
  ts: Float64Array;
  /** Index of the oldest hit. */
  head: number;
  /** Number of hits stored. */
  count: number;
  /** Window of the last hit, used by the sweep. */
  windowMs: number;
}

const INITIAL_CAPACITY = 8;

/**
 * In-process exact sliding-window limiter. Amortised O(1) per hit: each
 * accepted timestamp is appended once and dropped once. Memory per key is
 * bounded by `limit` doubles; keys whose hits have all left the window are
 * removed by a periodic (unref'd) sweep.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.now = options.now ?? (() => Date.now());
    const interval = options.sweepIntervalMs ?? 60_000;
    if (interval > 0) {
      this.timer = setInterval(() => this.sweep(), interval);
      this.timer.unref();
    }
  }

  /** Number of keys currently tracked. */
  get size(): number {
    return this.entries.size;
  }

  async hit(key: string, limit: number, windowMs: number, nowMs?: number): Promise<RateLimitResult> {
    return this.hitSync(key, limit, windowMs, nowMs);
  }

  /** Synchronous variant of hit(). */
  hitSync(key: string, limit: number, windowMs: number, nowMs?: number): RateLimitResult {
    return this.apply(key, limit, windowMs, nowMs, true);
  }

  async peek(key: string, limit: number, windowMs: number, nowMs?: number): Promise<RateLimitResult> {
    return this.apply(key, limit, windowMs, nowMs, false);
  }

  private apply(key: string, limit: number, windowMs: number, nowMs: number | undefined, record: boolean): RateLimitResult {
    assertLimitArgs(limit, windowMs, nowMs);
    const now = nowMs ?? this.now();

    let e = this.entries.get(key);
    if (e === undefined) {
      // Nothing recorded: a peek keeps it that way, so looking never costs memory.
      if (!record) return buildResult(true, limit, 0, windowMs, now, now, now);
      e = { ts: new Float64Array(Math.min(limit, INITIAL_CAPACITY)), head: 0, count: 0, windowMs };
      this.entries.set(key, e);
    } else if (e.ts.length > limit) {
      // The limit for this key was lowered: keep only the newest `limit` hits.
      resize(e, limit);
    }
    e.windowMs = windowMs;

    // Drop hits that have left the window: a hit at t counts while t > now - windowMs.
    const cutoff = now - windowMs;
    let cap = e.ts.length;
    while (e.count > 0 && e.ts[e.head]! <= cutoff) {
      e.head = e.head + 1 === cap ? 0 : e.head + 1;
      e.count--;
    }
    if (e.count === 0) e.head = 0;

    const allowed = e.count < limit;
    if (allowed && record) {
      if (e.count === cap) {
        resize(e, Math.min(limit, cap * 2));
        cap = e.ts.length;
      }
      // Keep the buffer ordered even if the clock steps backwards.
      const stamp = e.count > 0 ? Math.max(now, e.ts[(e.head + e.count - 1) % cap]!) : now;
      e.ts[(e.head + e.count) % cap] = stamp;
      e.count++;
    }

    if (e.count === 0) return buildResult(allowed, limit, 0, windowMs, now, now, now);
    const oldest = e.ts[e.head]!;
    const newest = e.ts[(e.head + e.count - 1) % cap]!;
    return buildResult(allowed, limit, e.count, windowMs, now, oldest, newest);
  }

  /** Removes keys whose hits have all left their window. Returns the number of keys removed. */
  sweep(nowMs: number = this.now()): number {
    let removed = 0;
    for (const [key, e] of this.entries) {
      const newest = e.count > 0 ? e.ts[(e.head + e.count - 1) % e.ts.length]! : -Infinity;
      if (newest <= nowMs - e.windowMs) {
        this.entries.delete(key);
        removed++;
      }
    }
    return removed;
  }

  /** Forgets all hits for `key`. */
  reset(key: string): void {
    this.entries.delete(key);
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    this.entries.clear();
  }
}

/** Re-lays the entry out in a buffer of `capacity`, keeping the newest hits in order. */
function resize(e: Entry, capacity: number): void {
  const keep = Math.min(e.count, capacity);
  const next = new Float64Array(capacity);
  const cap = e.ts.length;
  const start = e.head + (e.count - keep);
  for (let i = 0; i < keep; i++) next[i] = e.ts[(start + i) % cap]!;
  e.ts = next;
  e.head = 0;
  e.count = keep;
}
