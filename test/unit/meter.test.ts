// The billing rules of a live call, on the meter alone with a fake clock: no sockets, no database.
import { describe, expect, it } from 'vitest';
import { CallMeter } from '../../src/calls/media/room/meter.js';

const INTERVAL = 5_000;

/** A meter at t=0 with a 5 s charging interval, and a way to walk its ticks (20 ms apart) to `until`. */
function meterAt0(interval = INTERVAL) {
  const meter = new CallMeter(0, () => interval);
  const charges: Array<{ at: number; seconds: number }> = [];
  let now = 0;
  const runUntil = (until: number) => {
    for (; now <= until; now += 20) {
      const charge = meter.tick(now);
      if (charge) charges.push({ at: now, seconds: charge.seconds });
    }
    now = until;
  };
  return { meter, charges, runUntil };
}

describe('CallMeter: a live call is billed per second while interpretation runs', () => {
  it('charges the whole seconds interpreted at every interval, and nothing while nothing runs', () => {
    const { meter, charges, runUntil } = meterAt0();
    runUntil(12_000);
    expect(charges).toEqual([]);
    meter.setRunning(true, 12_000);
    runUntil(24_000);
    // Interval ends at 15 s (3 s interpreted), 20 s (5 s more); the rest waits for the next one.
    expect(charges).toEqual([
      { at: 15_000, seconds: 3 },
      { at: 20_000, seconds: 5 },
    ]);
    expect(meter.unbilled(24_000)).toBe(4_000);
  });

  it('charges the started second when interpretation stops, and never charges it again', () => {
    const { meter, charges, runUntil } = meterAt0();
    meter.setRunning(true, 0);
    runUntil(2_300);
    meter.setRunning(false, 2_300);
    expect(meter.settle(2_300)).toEqual({ seconds: 3 });
    // 0.7 s of that third second were paid in advance: the next 0.7 s of interpretation are free.
    meter.setRunning(true, 3_000);
    meter.setRunning(false, 3_700);
    expect(meter.settle(3_700)).toBeNull();
    meter.setRunning(true, 4_000);
    meter.setRunning(false, 4_001);
    expect(meter.settle(4_001)).toEqual({ seconds: 1 });
    expect(charges).toEqual([]);
  });

  it('charges the moment a prepaid balance is spent, so a call overdraws by one started second at most', () => {
    const { meter, charges, runUntil } = meterAt0(60_000);
    meter.setRunning(true, 0);
    // The balance pays for 2.5 s of interpretation.
    meter.fund(2_500, 0);
    runUntil(4_000);
    // Not at the 60 s interval: at 2.5 s, the started third second included.
    expect(charges).toEqual([{ at: 2_500, seconds: 3 }]);
  });

  it('counts the funded time from what was interpreted when the balance was learnt', () => {
    const { meter, charges, runUntil } = meterAt0(60_000);
    meter.setRunning(true, 0);
    runUntil(1_000);
    meter.fund(1_000, 1_000);
    runUntil(3_000);
    expect(charges).toEqual([{ at: 2_000, seconds: 2 }]);
  });

  it('an unlimited balance (invoiced) is charged per interval only', () => {
    const { meter, charges, runUntil } = meterAt0(1_000);
    meter.setRunning(true, 0);
    meter.fund(null, 0);
    runUntil(3_000);
    expect(charges.map((c) => c.seconds)).toEqual([1, 1, 1]);
  });

  it('a refunded (failed) charge is charged again later', () => {
    const { meter, charges, runUntil } = meterAt0(1_000);
    meter.setRunning(true, 0);
    runUntil(1_000);
    meter.refund({ seconds: charges[0].seconds });
    runUntil(2_000);
    expect(charges.map((c) => c.seconds)).toEqual([1, 2]);
  });

  it('time runs once however many directions interpret: the meter only knows running or not', () => {
    const { meter } = meterAt0();
    meter.setRunning(true, 0);
    meter.setRunning(true, 500);
    meter.setRunning(false, 1_000);
    meter.setRunning(false, 1_500);
    expect(meter.unbilled(2_000)).toBe(1_000);
  });

  it('asks for the balance at most once per interval while interpretation is stopped for want of money', () => {
    const { meter } = meterAt0();
    expect(meter.fundingCheckDue(0)).toBe(true);
    expect(meter.fundingCheckDue(4_999)).toBe(false);
    expect(meter.fundingCheckDue(5_000)).toBe(true);
    expect(meter.fundingCheckDue(5_001)).toBe(false);
  });
});
