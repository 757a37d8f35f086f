// The shared (Redis) limiter, with this instance's own in memory for when Redis does not answer: a
// request is never refused or failed because the limiter's store is away; while it is, each instance
// counts on its own, and the shared counts take over again once Redis answers (what was counted
// meanwhile is not carried over).
import type { Logger } from 'pino';
import type { RateLimitResult, RateLimitStore } from './store.js';

export class FallbackRateLimitStore implements RateLimitStore {
  /** The shared store failed while Redis seemed reachable (slow, or an error of its own): said once, until it answers. */
  private warned = false;

  constructor(
    private readonly shared: RateLimitStore,
    private readonly local: RateLimitStore,
    private readonly logger: Logger,
    /** Whether Redis is reachable; while it is not (told once, src/deployment/redis.ts), the shared store is not asked. */
    private readonly sharedReachable: () => boolean,
  ) {}

  hit(key: string, limit: number, windowMs: number, nowMs?: number): Promise<RateLimitResult> {
    return this.either((store) => store.hit(key, limit, windowMs, nowMs));
  }

  peek(key: string, limit: number, windowMs: number, nowMs?: number): Promise<RateLimitResult> {
    return this.either((store) => store.peek(key, limit, windowMs, nowMs));
  }

  private async either(use: (store: RateLimitStore) => Promise<RateLimitResult>): Promise<RateLimitResult> {
    if (!this.sharedReachable()) return use(this.local);
    try {
      const result = await use(this.shared);
      if (this.warned) this.logger.info('rate limits: Redis answers again; counting is shared again');
      this.warned = false;
      return result;
    } catch (err) {
      if (!this.warned && this.sharedReachable()) {
        this.logger.warn({ err }, 'rate limits: Redis did not answer; counting on this instance until it does');
        this.warned = true;
      }
      return use(this.local);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close?.(), this.local.close?.()]);
  }
}
