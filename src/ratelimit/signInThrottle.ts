// Console sign-in slows guessing down without ever locking the rightful member out. Refused sign-ins
// are counted per client address and per email (in the rate-limit store, so every instance sees them);
// after `freeFailures` of them within the window, each further one doubles the wait (1 s, 2 s, 4 s, ...,
// at most `maxDelayMs`) since the newest. An address that has not been failing is never made to wait:
// the member typing the right password from their own address signs in however hard their email is
// being guessed at from elsewhere. A failing address waits for the longer of its own delay and the email's.
import type { SignInThrottleSettings } from '../config.js';
import { addressBucket } from './failedAttempts.js';
import type { RateLimitStore } from './store.js';

/** More refusals than this in a window count as this many (the delay has long reached its ceiling). */
const COUNTED = 1000;

export class SignInThrottle {
  constructor(
    private readonly store: RateLimitStore,
    private readonly settings: SignInThrottleSettings,
  ) {}

  /** 0 when a sign-in from `address` for `emailKey` is checked now; else the whole seconds to wait (nothing is checked). */
  async retryAfter(address: string, emailKey: string, nowMs: number): Promise<number> {
    const fromAddress = await this.failures(addressKey(address), nowMs);
    if (!fromAddress.count) return 0;
    const forEmail = await this.failures(emailKeyOf(emailKey), nowMs);
    return Math.max(this.waitAfter(fromAddress, nowMs), this.waitAfter(forEmail, nowMs));
  }

  /** Counts a refused sign-in against the address and the email. */
  async refused(address: string, emailKey: string, nowMs: number): Promise<void> {
    const { windowMs } = this.settings;
    await Promise.all([this.store.hit(addressKey(address), COUNTED, windowMs, nowMs), this.store.hit(emailKeyOf(emailKey), COUNTED, windowMs, nowMs)]);
  }

  /** The delay after `count` refusals: none for the free ones, then doubling from one second, bounded. */
  delayMs(count: number): number {
    const { freeFailures, maxDelayMs } = this.settings;
    if (count < freeFailures) return 0;
    return Math.min(1000 * 2 ** Math.min(count - freeFailures, 30), maxDelayMs);
  }

  private waitAfter({ count, newestMs }: { count: number; newestMs: number }, nowMs: number): number {
    const delay = this.delayMs(count);
    const until = newestMs + delay;
    return delay && until > nowMs ? Math.ceil((until - nowMs) / 1000) : 0;
  }

  /** Refusals within the window, and (to the second, rounded up) when the newest was. */
  private async failures(key: string, nowMs: number): Promise<{ count: number; newestMs: number }> {
    const { windowMs } = this.settings;
    const seen = await this.store.peek(key, COUNTED, windowMs, nowMs);
    return { count: COUNTED - seen.remaining, newestMs: seen.resetAtSeconds * 1000 - windowMs };
  }
}

const addressKey = (address: string) => `sign-in:address:${addressBucket(address)}`;
const emailKeyOf = (emailKey: string) => `sign-in:email:${emailKey}`;
