// Ids and secrets are drawn from a pool of CSPRNG bytes refilled in batches: they must stay unique and
// uniform across refills.
import { describe, expect, it } from 'vitest';
import { newId, newSecret, randomBase62 } from '../../src/lib/ids.js';

describe('random ids and secrets', () => {
  it('have their shape', () => {
    expect(newId('evt')).toMatch(/^evt_[0-9A-Za-z]{16}$/);
    expect(newSecret('sk_test_')).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
  });

  it('never repeat across many refills of the pool', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => newId('x'))); // ~80 pools of bytes
    expect(ids.size).toBe(20_000);
  });

  it('use every base62 character about equally often', () => {
    const counts = new Map<string, number>();
    for (const char of randomBase62(620_000)) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 10,000 expected each; a standard deviation is about 100, so 9,400-10,600 fails only on a real bias.
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(9_400);
      expect(count).toBeLessThan(10_600);
    }
  });
});
