// The two small mechanisms behind held connections: slots per holder, and revocation announcements.
import { describe, expect, it } from 'vitest';
import { LocalRevocationBus } from '../../src/auth/revocation.js';
import { ConnectionSlots } from '../../src/ratelimit/connectionSlots.js';

describe('ConnectionSlots', () => {
  it('gives each holder up to its limit, and a slot back exactly once however often it is released', () => {
    const slots = new ConnectionSlots();
    const a1 = slots.take('a', 2)!;
    const a2 = slots.take('a', 2)!;
    expect(slots.take('a', 2)).toBeNull();
    expect(slots.take('b', 2)).not.toBeNull();
    a1();
    a1();
    expect(slots.count('a')).toBe(1);
    expect(slots.take('a', 2)).not.toBeNull();
    expect(slots.take('a', 2)).toBeNull();
    a2();
    expect(slots.count()).toBe(2);
  });
});

describe('LocalRevocationBus', () => {
  it("tells every watcher of a credential once, and no one else's", () => {
    const bus = new LocalRevocationBus(() => {});
    const heard: string[] = [];
    bus.watch('key_a', () => heard.push('a1'));
    bus.watch('key_a', () => heard.push('a2'));
    bus.watch('key_b', () => heard.push('b'));
    const stopped = bus.watch('key_a', () => heard.push('stopped'));
    stopped();
    bus.announce('key_a');
    bus.announce('key_a');
    expect(heard).toEqual(['a1', 'a2']);
    expect(bus.watcherCount()).toBe(1);
  });

  it('a failing watcher is reported and does not keep the others from hearing', () => {
    const failures: unknown[] = [];
    const bus = new LocalRevocationBus((err) => failures.push(err));
    const heard: string[] = [];
    bus.watch('key_a', () => {
      throw new Error('boom');
    });
    bus.watch('key_a', () => heard.push('second'));
    bus.announce('key_a');
    expect(heard).toEqual(['second']);
    expect(failures).toEqual([new Error('boom')]);
  });
});
