import { describe, expect, it } from 'vitest';
import type { ApiPrincipal } from '../../src/auth/principal.js';
import { PrincipalCache } from '../../src/auth/principalCache.js';
import { LocalRevocationBus } from '../../src/auth/revocation.js';

const principal = (keyId: string): ApiPrincipal => ({ kind: 'apiKey', keyId, orgId: 'org_1', mode: 'test', scopes: ['translate'], rateLimitKey: `key:${keyId}`, expiresAt: null });

/** A bus whose hearing can be switched off, as the PostgreSQL bus's is while its connection is down. */
class SwitchableBus extends LocalRevocationBus {
  on = true;
  override hearing(): boolean {
    return this.on;
  }
}

function setup(options: { ttlMs?: number; maxEntries?: number } = {}) {
  const bus = new SwitchableBus(() => {});
  let now = 0;
  const cache = new PrincipalCache(bus, { ttlMs: options.ttlMs ?? 1_000, maxEntries: options.maxEntries ?? 10, now: () => now });
  const loads: string[] = [];
  const lookup = (hash: string, keyId = hash) =>
    cache.principalFor(hash, async () => {
      loads.push(hash);
      return principal(keyId);
    });
  return { bus, cache, loads, lookup, advance: (ms: number) => (now += ms) };
}

describe('PrincipalCache', () => {
  it('loads a key once and answers from memory until the TTL runs out', async () => {
    const { loads, lookup, advance } = setup({ ttlMs: 1_000 });
    await lookup('h1');
    advance(999);
    await lookup('h1');
    expect(loads).toEqual(['h1']);
    advance(1);
    await lookup('h1');
    expect(loads).toEqual(['h1', 'h1']);
  });

  it('forgets a key when its revocation is announced', async () => {
    const { bus, loads, lookup } = setup();
    await lookup('h1', 'key_a');
    await lookup('h2', 'key_b');
    await bus.announce('key_a');
    await lookup('h1', 'key_a');
    await lookup('h2', 'key_b');
    expect(loads).toEqual(['h1', 'h2', 'h1']);
  });

  it('does not keep a lookup that was under way while a revocation was announced', async () => {
    const { bus, cache } = setup();
    let finish: (p: ApiPrincipal) => void = () => {};
    const pending = cache.principalFor('h1', () => new Promise((resolve) => (finish = resolve)));
    await bus.announce('key_a');
    finish(principal('key_a'));
    await pending;
    expect(cache.size()).toBe(0);
  });

  it('keeps at most maxEntries, dropping the least recently used', async () => {
    const { loads, lookup } = setup({ maxEntries: 2 });
    await lookup('h1');
    await lookup('h2');
    await lookup('h1'); // h1 is now the most recently used
    await lookup('h3'); // drops h2
    await lookup('h1');
    await lookup('h2');
    expect(loads).toEqual(['h1', 'h2', 'h3', 'h2']);
  });

  it('answers nothing from memory while the bus cannot hear every instance, and empties itself on a gap', async () => {
    const { bus, cache, loads, lookup } = setup();
    await lookup('h1');
    bus.on = false;
    bus.deliverGap();
    expect(cache.size()).toBe(0);
    await lookup('h1');
    await lookup('h1');
    expect(cache.size()).toBe(0);
    bus.on = true;
    await lookup('h1');
    await lookup('h1');
    expect(loads).toEqual(['h1', 'h1', 'h1', 'h1']);
  });

  it('never keeps an unknown key, and is off with a TTL of 0', async () => {
    const { cache } = setup();
    let loads = 0;
    const unknown = () => cache.principalFor('hx', async () => (loads++, undefined));
    await unknown();
    await unknown();
    expect(loads).toBe(2);
    const off = setup({ ttlMs: 0 });
    await off.lookup('h1');
    await off.lookup('h1');
    expect(off.loads).toEqual(['h1', 'h1']);
  });
});
