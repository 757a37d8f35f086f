// Which addresses webhooks may go to, and the lookup that checks the address really connected to.
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { guardedLookup, isPrivateAddress, literalAddress } from '../../src/webhooks/addresses.js';
import { retryDelayMs } from '../../src/webhooks/worker.js';

describe('webhook addresses', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.20.30.40', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['192.168.0.10', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['::1', true],
    ['::', true],
    ['fd12:3456::1', true],
    ['fc00::1', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:10.0.0.1', true],
    ['64:ff9b::a00:1', true],
    ['8.8.8.8', false],
    ['172.32.0.1', false],
    ['93.184.216.34', false],
    ['2606:4700:4700::1111', false],
    ['::ffff:8.8.8.8', false],
  ])('%s private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });

  it('reads IP literals out of URL hosts', () => {
    expect(literalAddress(new URL('http://[::1]:8080/').hostname)).toBe('::1');
    expect(literalAddress(new URL('http://127.0.0.1/').hostname)).toBe('127.0.0.1');
    expect(literalAddress(new URL('http://hooks.example.com/').hostname)).toBeNull();
  });

  it('refuses a name that resolves to loopback when connecting', async () => {
    const result = await new Promise<{ err: NodeJS.ErrnoException | null; addresses?: unknown }>((resolve) =>
      guardedLookup('localhost', { all: true }, (err, addresses?: string | LookupAddress[]) => resolve({ err, addresses })),
    );
    // The host only, never the address it resolved to.
    expect(result.err?.message).toBe('localhost resolves to a private or local address; webhooks are not delivered there');
  });

  it('waits 1 minute, doubling, at most 6 hours', () => {
    expect([1, 2, 3, 9, 10, 11, 50].map(retryDelayMs)).toEqual([60_000, 120_000, 240_000, 15_360_000, 21_600_000, 21_600_000, 21_600_000]);
  });
});
