import type { Knex } from 'knex';
import type { LiveCallStats } from '../calls/callStats.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { EngineRegistry } from '../engines/registry.js';
import type { PrincipalCache } from '../auth/principalCache.js';
import type { RevocationBus } from '../auth/revocation.js';
import type { EventBus } from '../events/bus.js';
import type { Metrics } from '../observability/metrics.js';
import type { FailedAttempts } from '../ratelimit/failedAttempts.js';
import type { SignInThrottle } from '../ratelimit/signInThrottle.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import type { ConnectionSlots } from '../ratelimit/connectionSlots.js';
import type { LiveStreamGroups } from './liveStreamGroups.js';
import type { PresentedMessages } from '../sessions/presentedMessages.js';
import type { RedisAvailability } from '../deployment/redis.js';
import type { Passwords } from '../members/passwords.js';

/** What every handler and middleware may use: built once at start-up, closed at shutdown. */
export interface AppContext {
  config: Config;
  db: Knex;
  logger: Logger;
  rateLimits: RateLimitStore;
  /** Refused credentials and unknown ids per client address (guessing). */
  failedAttempts: FailedAttempts;
  /** Refused console sign-ins per address and per email: a bounded, growing delay (never a lock-out). */
  signInThrottle: SignInThrottle;
  /** How members' passwords are hashed and checked (src/members/passwords.ts). */
  passwords: Passwords;
  /** Seals secrets kept at rest (telephony auth tokens): SECRETS_KEY or the embedded key file. */
  secretsKey: Buffer;
  /** The admin token in force (from ADMIN_TOKEN, or generated on first start). */
  adminToken: string;
  /** Which engine translates, transcribes and interprets, per mode (test stand-ins or live engines). */
  engines: EngineRegistry;
  /** Delivers stored and ephemeral events to the streams open in this process. */
  events: EventBus;
  /** With several instances, whether the Redis they share answers (/readyz says degraded while it does not). */
  redis: RedisAvailability | null;
  /**
   * The installed app (its client_id) whose request this context serves: the events and ledger rows the
   * request writes name it (docs/oauth.md). Null in the process's own context (the media plane's clock,
   * webhooks) and for requests made with an API key or by a customer.
   */
  actingApp: string | null;
  /**
   * Sends queued webhook deliveries (src/webhooks/worker.ts): `nudge` asks for a claim soon (something
   * became due); `tick` claims what is due and resolves when this process has nothing more under way (tests).
   */
  webhooks: { nudge(): void; tick(): Promise<void> };
  /** Announces revoked credentials to the streams open with them. */
  revocations: RevocationBus;
  /** API keys recently looked up, forgotten when their revocation is announced. */
  principals: PrincipalCache;
  /** Chat messages as this process presented them (JSON text), answered again while they are in a page. */
  presentedMessages: PresentedMessages;
  /** The event streams open in this process, per holder (API key, chat session). */
  eventStreams: ConnectionSlots;
  /** Live event streams that show the same events, each group one listener of the bus. */
  liveStreams: LiveStreamGroups;
  /** The port PBXs connect to for AudioSocket lines, once bound. */
  audioSocketPort: number;
  /** How a call went in its media room on this instance so far (the media plane answers; `stats` of ended calls). */
  liveCallStats: LiveCallStats;
  /** This server instance (src/deployment/instances.ts): the holds and running requests it owns carry it. */
  instanceId: string;
  /** The wall clock of console sessions and OAuth codes and tokens, and their expiry (Date.now; tests put a fake one here). */
  now: () => number;
  /** Aborted when the server stops: long-lived streams and sockets end themselves. */
  shutdown: AbortSignal;
  /**
   * Aborted when the server starts to stop (SIGTERM): readiness answers 503 so a load balancer sends
   * new clients elsewhere, and no new media sockets are taken, while open calls go on for the grace.
   */
  draining: AbortSignal;
  /** This instance's Prometheus metrics (GET /metrics). */
  metrics: Metrics;
}
