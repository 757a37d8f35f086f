import { afterEach, describe, expect, it } from 'vitest';
import type { RateLimitResult, RateLimitStore } from '../../src/ratelimit/store.js';

export const W = 60_000;
/** A fixed-window boundary (multiple of 60 s), so the "0:59 / 1:01" case straddles one. */
export const T0 = 1_700_000_040_000;

const sec = (ms: number) => Math.ceil(ms / 1000);

/**
 * Behaviour every RateLimitStore must have. Shared by memoryStore.test.ts and
 * redisStore.test.ts: `factory` returns a fresh, empty store for each test.
 */
export function rateLimitStoreContract(name: string, factory: () => RateLimitStore | Promise<RateLimitStore>): void {
  describe(`${name}: RateLimitStore contract`, () => {
    const open: RateLimitStore[] = [];
    const make = async () => {
      const s = await factory();
      open.push(s);
      return s;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((s) => s.close?.()));
    });

    const hits = async (s: RateLimitStore, key: string, n: number, limit: number, nowMs: number) => {
      const out: RateLimitResult[] = [];
      for (let i = 0; i < n; i++) out.push(await s.hit(key, limit, W, nowMs));
      return out;
    };

    it('counts remaining down and reports limit, reset and no retry while allowed', async () => {
      const s = await make();
      for (let i = 0; i < 5; i++) {
        const r = await s.hit('k', 5, W, T0 + i * 1000);
        expect(r).toEqual({
          allowed: true,
          limit: 5,
          remaining: 4 - i,
          resetAtSeconds: sec(T0 + i * 1000 + W),
          retryAfterSeconds: 0,
        });
      }
    });

    it('rejects once the limit is reached, with retryAfterSeconds until the oldest hit leaves', async () => {
      const s = await make();
      await s.hit('k', 3, W, T0);
      await s.hit('k', 3, W, T0 + 1000);
      await s.hit('k', 3, W, T0 + 2000);

      expect(await s.hit('k', 3, W, T0 + 10_500)).toEqual({
        allowed: false,
        limit: 3,
        remaining: 0,
        resetAtSeconds: sec(T0 + 2000 + W),
        retryAfterSeconds: 50, // slot frees at T0 + 60 s, 49.5 s away -> rounded up
      });
      expect((await s.hit('k', 3, W, T0 + W - 1001)).retryAfterSeconds).toBe(2);
      expect((await s.hit('k', 3, W, T0 + W - 1000)).retryAfterSeconds).toBe(1);
      expect((await s.hit('k', 3, W, T0 + W - 1)).retryAfterSeconds).toBe(1);
    });

    it('rolls: allowed again exactly when the oldest hit leaves the window', async () => {
      const s = await make();
      await hits(s, 'k', 1, 3, T0);
      await hits(s, 'k', 1, 3, T0 + 10);
      await hits(s, 'k', 1, 3, T0 + 20);

      expect((await s.hit('k', 3, W, T0 + W - 1)).allowed).toBe(false);
      const r = await s.hit('k', 3, W, T0 + W); // hit at T0 is out now
      expect(r).toMatchObject({ allowed: true, remaining: 0, resetAtSeconds: sec(T0 + 2 * W) });
      expect((await s.hit('k', 3, W, T0 + W)).allowed).toBe(false);
      expect((await s.hit('k', 3, W, T0 + W + 9)).allowed).toBe(false);
      expect((await s.hit('k', 3, W, T0 + W + 10)).allowed).toBe(true);
      expect((await s.hit('k', 3, W, T0 + W + 20)).allowed).toBe(true);
      expect((await s.hit('k', 3, W, T0 + W + 20)).allowed).toBe(false);
    });

    it('is a sliding window: 600 at 0:59 and 600 more at 1:01 do not both pass', async () => {
      const s = await make();
      const first = await hits(s, 'k', 600, 600, T0 + 59_000);
      expect(first.every((r) => r.allowed)).toBe(true);
      expect(first.at(-1)!.remaining).toBe(0);

      const second = await hits(s, 'k', 600, 600, T0 + 61_000); // crosses the T0 + 60 s boundary
      expect(second.some((r) => r.allowed)).toBe(false);
      expect(second[0]).toMatchObject({ remaining: 0, retryAfterSeconds: 58, resetAtSeconds: sec(T0 + 59_000 + W) });

      const third = await hits(s, 'k', 601, 600, T0 + 59_000 + W);
      expect(third.filter((r) => r.allowed)).toHaveLength(600);
      expect(third[600]!.allowed).toBe(false);
    });

    it('does not count rejected hits', async () => {
      const s = await make();
      await s.hit('k', 2, W, T0);
      await s.hit('k', 2, W, T0 + 30_000);
      const rejected = await hits(s, 'k', 20, 2, T0 + 40_000);
      expect(rejected.every((r) => !r.allowed && r.remaining === 0)).toBe(true);
      expect((await s.hit('k', 2, W, T0 + 50_000)).allowed).toBe(false);

      // Only the hit at T0 has left; had the rejected hits counted, this would fail.
      expect(await s.hit('k', 2, W, T0 + W)).toMatchObject({ allowed: true, remaining: 0 });
      expect((await s.hit('k', 2, W, T0 + 30_000 + W - 1)).allowed).toBe(false);
      expect((await s.hit('k', 2, W, T0 + 30_000 + W)).allowed).toBe(true);
    });

    it('keeps keys independent', async () => {
      const s = await make();
      await hits(s, 'a', 2, 2, T0);
      expect((await s.hit('a', 2, W, T0 + 1)).allowed).toBe(false);
      expect(await s.hit('b', 2, W, T0 + 1)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await s.hit('a:b', 2, W, T0 + 1)).toMatchObject({ allowed: true, remaining: 1 });
      expect((await s.hit('a', 2, W, T0 + 2)).allowed).toBe(false);
    });

    it('admits exactly `limit` of many concurrent hits', async () => {
      const s = await make();
      const results = await Promise.all(Array.from({ length: 50 }, () => s.hit('k', 10, W, T0)));
      expect(results.filter((r) => r.allowed)).toHaveLength(10);
      expect(results.filter((r) => !r.allowed).every((r) => r.retryAfterSeconds === 60)).toBe(true);
    });

    it('uses the current time when nowMs is omitted', async () => {
      const s = await make();
      const before = Date.now();
      const r = await s.hit('k', 2, W);
      expect(r.allowed).toBe(true);
      expect(r.resetAtSeconds).toBeGreaterThanOrEqual(Math.floor((before + W) / 1000) - 2);
      expect(r.resetAtSeconds).toBeLessThanOrEqual(sec(Date.now() + W) + 2);
    });

    it('handles a lowered limit: a slot frees when the hits in the window drop below it', async () => {
      const s = await make();
      for (let i = 0; i < 10; i++) await s.hit('k', 10, W, T0 + i * 1000);
      // 10 hits in the window, limit now 3: one slot frees when the hit at T0+7s leaves.
      expect(await s.hit('k', 3, W, T0 + 10_000)).toMatchObject({ allowed: false, retryAfterSeconds: 57 });
      expect((await s.hit('k', 3, W, T0 + 7000 + W - 1)).allowed).toBe(false);
      expect((await s.hit('k', 3, W, T0 + 7000 + W)).allowed).toBe(true);
    });

    it('peek reports what a hit would get and records nothing', async () => {
      const s = await make();
      expect(await s.peek('k', 3, W, T0)).toEqual({
        allowed: true,
        limit: 3,
        remaining: 3,
        resetAtSeconds: sec(T0),
        retryAfterSeconds: 0,
      });
      for (let i = 0; i < 10; i++) expect((await s.peek('k', 3, W, T0)).remaining).toBe(3);

      await s.hit('k', 3, W, T0);
      await s.hit('k', 3, W, T0 + 1000);
      expect(await s.peek('k', 3, W, T0 + 2000)).toMatchObject({ allowed: true, remaining: 1, resetAtSeconds: sec(T0 + 1000 + W) });
      // Had the peeks counted, this third hit would be refused.
      expect(await s.hit('k', 3, W, T0 + 2000)).toMatchObject({ allowed: true, remaining: 0 });

      expect(await s.peek('k', 3, W, T0 + 10_500)).toEqual({
        allowed: false,
        limit: 3,
        remaining: 0,
        resetAtSeconds: sec(T0 + 2000 + W),
        retryAfterSeconds: 50,
      });
      // The window rolls for peeks as for hits: a slot frees exactly when the oldest hit leaves.
      expect((await s.peek('k', 3, W, T0 + W - 1)).allowed).toBe(false);
      expect(await s.peek('k', 3, W, T0 + W)).toMatchObject({ allowed: true, remaining: 1 });
      expect(await s.peek('k', 3, W, T0 + 2000 + W)).toMatchObject({ allowed: true, remaining: 3, resetAtSeconds: sec(T0 + 2000 + W) });
      expect(await s.hit('k', 3, W, T0 + 2000 + W)).toMatchObject({ allowed: true, remaining: 2 });
    });

    it('rejects invalid arguments', async () => {
      const s = await make();
      await expect(s.peek('k', 0, W, T0)).rejects.toThrow(RangeError);
      await expect(s.hit('k', 0, W, T0)).rejects.toThrow(RangeError);
      await expect(s.hit('k', 1.5, W, T0)).rejects.toThrow(RangeError);
      await expect(s.hit('k', 5, 0, T0)).rejects.toThrow(RangeError);
      await expect(s.hit('k', 5, W, Number.NaN)).rejects.toThrow(RangeError);
    });
  });
}
