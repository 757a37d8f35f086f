// When an endpoint's circuit opens and for how long: five failures in a row, then 1 minute doubling, at most an hour.
import { describe, expect, it } from 'vitest';
import { circuitOpenUntil } from '../../src/webhooks/circuit.js';

describe('webhook circuit breaker', () => {
  it('stays closed below five failures in a row, then pauses 1 minute, doubling, at most an hour', () => {
    const now = Date.parse('2026-12-07T10:00:00.000Z');
    const pauses = [1, 4, 5, 6, 7, 10, 11, 12, 100].map((failures) => {
      const until = circuitOpenUntil(failures, now);
      return until && until.getTime() - now;
    });
    expect(pauses).toEqual([null, null, 60_000, 120_000, 240_000, 1_920_000, 3_600_000, 3_600_000, 3_600_000]);
  });
});
