// Guessing: refused credentials and unknown ids are counted per client address, never against the
// holder of what was guessed at, so guesses cannot lock the rightful user out.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { RateLimitStore } from './store.js';

export interface FailedAttemptSettings {
  perWindow: number;
  windowMs: number;
  /** Proxies in front of the server that append to X-Forwarded-For (0: trust none). */
  trustProxyHops: number;
}

/**
 * The client's address: the TCP peer, or, behind `trustedHops` proxies, the address the outermost
 * of them saw (Express's `trust proxy` set to a number follows the same rule). Anything a client
 * wrote itself into X-Forwarded-For lies beyond the trusted hops and is never used.
 */
export function clientAddress(req: IncomingMessage, trustedHops: number): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (trustedHops === 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((part) => part.trim());
  const chain = [peer, ...forwarded.filter(Boolean).reverse()];
  const candidate = chain[Math.min(trustedHops, chain.length - 1)]!;
  return isIP(candidate) ? candidate : peer;
}

/**
 * The unit one client controls: an IPv4 address, or an IPv6 /64 (one host usually holds a whole
 * /64, so counting single IPv6 addresses would give a guesser 2^64 budgets).
 */
export function addressBucket(address: string): string {
  const plain = address.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
  if (mapped) return mapped[1]!;
  if (isIP(plain) !== 6) return plain;
  const [head, tail] = plain.split('::') as [string, string | undefined];
  const groupsOf = (part: string) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  const groups = [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

export class FailedAttempts {
  constructor(
    private readonly store: RateLimitStore,
    private readonly settings: FailedAttemptSettings,
  ) {}

  /** Where `req` comes from, by the server's proxy setting. */
  addressOf(req: IncomingMessage): string {
    return clientAddress(req, this.settings.trustProxyHops);
  }

  /** 0 when `address` may try now, else the whole seconds until it may (nothing is counted). */
  async retryAfter(address: string): Promise<number> {
    const { perWindow, windowMs } = this.settings;
    const result = await this.store.peek(bucketKey(address), perWindow, windowMs);
    return result.allowed ? 0 : result.retryAfterSeconds;
  }

  /** Counts one refused credential or unknown id against `address`. */
  async record(address: string): Promise<void> {
    const { perWindow, windowMs } = this.settings;
    await this.store.hit(bucketKey(address), perWindow, windowMs);
  }
}

const bucketKey = (address: string) => `failed:${addressBucket(address)}`;
