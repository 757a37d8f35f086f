// The embedded database's connection gate (src/db/connectionGate.ts): statements share, a transaction
// is alone, first come first served, and a wait that times out lets those behind it through.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConnectionGate, type Leave } from '../../src/db/connectionGate.js';

const timeout = () => new Error('timed out');

describe('connection gate', () => {
  afterEach(() => vi.useRealTimers());

  it('lets statements share the connection, and a transaction in only once they have left', async () => {
    const gate = new ConnectionGate();
    const first = await gate.enter(false, undefined, timeout);
    const second = await gate.enter(false, undefined, timeout);
    const order: string[] = [];
    const transaction = gate.enter(true, undefined, timeout).then((leave) => (order.push('transaction'), leave));
    await Promise.resolve();
    first();
    await Promise.resolve();
    expect(order).toEqual([]);
    second();
    const leave = await transaction;
    expect(order).toEqual(['transaction']);
    leave();
  });

  it('holds back statements that arrive while a transaction waits or runs, then lets them all in together', async () => {
    const gate = new ConnectionGate();
    const statement = await gate.enter(false, undefined, timeout);
    const order: string[] = [];
    const entered = (name: string) => (leave: Leave) => (order.push(name), leave);
    const transaction = gate.enter(true, undefined, timeout).then(entered('transaction'));
    const later = [gate.enter(false, undefined, timeout).then(entered('later 1')), gate.enter(false, undefined, timeout).then(entered('later 2'))];
    const nextTransaction = gate.enter(true, undefined, timeout).then(entered('next transaction'));
    statement();
    (await transaction)();
    const [a, b] = await Promise.all(later);
    expect(order).toEqual(['transaction', 'later 1', 'later 2']);
    a!();
    b!();
    (await nextTransaction)();
    expect(order).toEqual(['transaction', 'later 1', 'later 2', 'next transaction']);
  });

  it('lets at most the given number of statements in at once, the next as soon as one leaves', async () => {
    const gate = new ConnectionGate(2);
    const first = await gate.enter(false, undefined, timeout);
    await gate.enter(false, undefined, timeout);
    let third: Leave | undefined;
    void gate.enter(false, undefined, timeout).then((leave) => (third = leave));
    await Promise.resolve();
    expect(third).toBeUndefined();
    first();
    await Promise.resolve();
    expect(third).toBeInstanceOf(Function);
  });

  it('leaving twice counts once', async () => {
    const gate = new ConnectionGate();
    const statement = await gate.enter(false, undefined, timeout);
    const other = await gate.enter(false, undefined, timeout);
    statement();
    statement();
    let entered = false;
    const transaction = gate.enter(true, undefined, timeout).then((leave) => ((entered = true), leave));
    await Promise.resolve();
    expect(entered).toBe(false);
    other();
    (await transaction)();
  });

  it('gives up a wait after its timeout, and lets the statements queued behind it in', async () => {
    vi.useFakeTimers();
    const gate = new ConnectionGate();
    const running = await gate.enter(false, undefined, timeout);
    const transaction = gate.enter(true, 1_000, timeout);
    const refused = expect(transaction).rejects.toThrow('timed out');
    let behind: Leave | undefined;
    void gate.enter(false, undefined, timeout).then((leave) => (behind = leave));
    await vi.advanceTimersByTimeAsync(999);
    expect(behind).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await refused;
    expect(behind).toBeInstanceOf(Function);
    running();
    behind!();
  });
});
