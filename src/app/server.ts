// Start-up and shutdown: open the database, migrate, bootstrap, listen; on stop, drain and close.
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createApp } from './expressApp.js';
import { PostgresRevocationBus } from '../auth/postgresRevocationBus.js';
import { PrincipalCache } from '../auth/principalCache.js';
import { PresentedMessages } from '../sessions/presentedMessages.js';
import { LocalRevocationBus, type RevocationBus } from '../auth/revocation.js';
import { createMediaPlane, type MediaPlane, type MediaPlaneOptions } from '../calls/media/plane.js';
import { ledgerFunding, storedCalls, storedRecords } from './mediaPorts.js';
import { REFUSAL } from '../calls/media/protocol.js';
import type { TransportFactory } from '../calls/media/transport.js';
import { RedisMediaBridge } from '../calls/media/transports/bridge/redisBridge.js';
import { defaultPeerHost } from '../calls/media/transports/bridge/peerLinks.js';
import { TRANSPORTS } from '../calls/media/transports/index.js';
import type { AppContext } from '../http/context.js';
import { bootstrap } from './bootstrap.js';
import type { Config } from '../config.js';
import { openDatabase, type Database, type MemoryDatabase, type StatementsThreads } from '../db/database.js';
import { createEngineRegistry } from '../engines/registry.js';
import { migrateToLatest } from '../db/migrate.js';
import { LocalEventBus } from '../events/bus.js';
import { startRedisEventBus, type RedisEventBus } from '../events/redisBus.js';
import { startInstance, type RunningInstance } from '../deployment/instances.js';
import { loggerFor } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { observeLedger } from '../money/index.js';
import { createHttpServer } from '../http/connections.js';
import { routeUpgrades } from '../http/upgrades.js';
import { startPeriodicJobs } from '../deployment/housekeeping.js';
import { WebhookWorker } from '../webhooks/worker.js';
import { FailedAttempts } from '../ratelimit/failedAttempts.js';
import { SignInThrottle } from '../ratelimit/signInThrottle.js';
import { argon2idPasswords, type Passwords } from '../members/passwords.js';
import { FallbackRateLimitStore } from '../ratelimit/fallbackStore.js';
import { MemoryRateLimitStore } from '../ratelimit/memoryStore.js';
import { RedisRateLimitStore } from '../ratelimit/redisStore.js';
import { connected, connectRedis, type RedisConnections } from '../deployment/redis.js';
import { ConnectionSlots } from '../ratelimit/connectionSlots.js';
import { LiveStreamGroups } from '../http/liveStreamGroups.js';
import { deliverToGroup } from '../http/sse.js';
import { giveHeapRoom } from './heapGrowth.js';
import { resolveSecretsKey } from '../secrets/key.js';
import { sealPlaintextTokens } from '../telephony/connectors.js';
import { hangUpPhonesWhenCallsEnd } from '../calls/phoneLegs.js';

export interface RunningServer {
  app: AppContext;
  url: string;
  port: number;
  banner: string | undefined;
  /** The media plane (rooms, and the transports' counters by name); tests configure it. */
  media: MediaPlane;
  /**
   * The ports the transports' own listeners bound, by transport name (AUDIOSOCKET_PORT=0 picks one);
   * null when one could not listen.
   */
  ports: Readonly<Record<string, number | null>>;
  /** What the server holds open right now (tests check that nothing is left behind). */
  connectionStats(): Promise<ConnectionStats>;
  stop(): Promise<void>;
}

export interface ConnectionStats {
  /** TCP connections of the HTTP server, upgraded ones (WebSockets) included. */
  httpConnections: number;
  eventStreams: number;
  /** Connections each media transport holds, admitted or not, by its name. */
  transports: Record<string, number>;
}

export interface StartOptions {
  /** Default: loggerFor(config). A logger given here should come from src/observability/logger.ts too. */
  logger?: Logger;
  /** Tests: in-memory PGlite instead of DATA_DIR, empty or from a snapshot. */
  memoryDatabase?: MemoryDatabase;
  /** Tests: PostgreSQL's statements threads lent from server to server (src/db/database.ts). */
  statementsThreads?: StatementsThreads;
  /** Media plane settings (the billing interval, the clock). */
  media?: MediaPlaneOptions;
  /** The media transports to start; default: the list in src/calls/media/transports/index.ts (tests add their own). */
  transports?: readonly TransportFactory[];
  /** The embedded database's worker thread stopped unasked (src/main.ts exits); default: logged. */
  onDatabaseLost?: (error: Error) => void;
  /** Tests: members' passwords hashed at a lower cost; default: argon2id at OWASP's setting. */
  passwords?: Passwords;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  giveHeapRoom();
  const logger = options.logger ?? loggerFor(config);
  const database: Database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    memory: options.memoryDatabase,
    statementsThreads: options.statementsThreads,
    timeouts: config.databaseTimeouts,
    logger,
    onLost: options.onDatabaseLost,
  });
  let instance: RunningInstance | undefined;
  let stopRevocations = async () => {};
  let redis: RedisConnections | null = null;
  let redisEvents: RedisEventBus | null = null;
  try {
    await migrateToLatest(database.knex);
    const { adminToken, banner } = await bootstrap(database.knex, config);
    const secretsKey = await resolveSecretsKey(config);
    // Every setting is optional (README, "Configuration"), so a shared database without SECRETS_KEY still starts;
    // but a key file per instance cannot open tokens another instance sealed.
    if (config.databaseUrl && !config.secretsKey) {
      logger.warn(
        { keyFile: `${config.dataDir}/secrets.key` },
        'SECRETS_KEY is not set: telephony auth tokens are sealed with a key file in DATA_DIR; set one SECRETS_KEY for every instance that shares this database',
      );
    }
    const sealed = await sealPlaintextTokens(database.knex, secretsKey);
    if (sealed) logger.info({ sealed }, 'telephony: sealed auth tokens stored in plaintext');
    // Registered before serving: every hold and running request names a live instance.
    const running = await startInstance(database.knex, {
      heartbeatMs: config.instanceHeartbeatMs,
      soleInstance: database.kind === 'pglite',
      logger,
    });
    instance = running;
    // PGlite serves one process, so announcements made here are all there are; PostgreSQL may be
    // shared by several instances, which hear each other's through LISTEN/NOTIFY.
    const revocations: RevocationBus =
      database.kind === 'postgres'
        ? await PostgresRevocationBus.start({ databaseUrl: config.databaseUrl!, db: database.knex, logger, connectTimeoutMs: config.databaseTimeouts.connectMs })
        : new LocalRevocationBus((err) => logger.error({ err }, 'revocation: ending a stream failed'));
    stopRevocations = () => (revocations instanceof PostgresRevocationBus ? revocations.close() : Promise.resolve());
    // Several instances share one PostgreSQL and one Redis (docs/several-instances.md); PGlite serves one process.
    if (config.redisUrl && database.kind === 'pglite') {
      logger.warn('REDIS_URL is not used: the embedded database (PGlite) serves one process; set DATABASE_URL to run several instances');
    } else if (config.redisUrl) {
      redis = await connectRedis(
        { url: config.redisUrl, prefix: config.redisPrefix, connectTimeoutMs: config.databaseTimeouts.connectMs, commandTimeoutMs: config.redisCommandTimeoutMs },
        logger,
      );
      redisEvents = await startRedisEventBus({ publisher: redis.commands, subscriber: redis.subscriber, channel: `${redis.prefix}events`, db: database.knex, logger });
    }
    const sharedCommands = redis?.commands;
    const rateLimits = sharedCommands
      ? new FallbackRateLimitStore(new RedisRateLimitStore(sharedCommands, `${config.redisPrefix}ratelimit:`), new MemoryRateLimitStore(), logger, () => connected(sharedCommands))
      : new MemoryRateLimitStore();
    const shutdown = new AbortController();
    const draining = new AbortController();
    // Every open event stream listens for shutdown: there is no meaningful limit.
    setMaxListeners(0, shutdown.signal);
    const events = redisEvents?.bus ?? new LocalEventBus();
    // The clock is read through `app`, where tests move it.
    const webhooks = new WebhookWorker({ db: database.knex, events, logger, secretsKey, config, now: () => app.now() });
    const app: AppContext = {
      config,
      db: database.knex,
      logger,
      rateLimits,
      failedAttempts: new FailedAttempts(rateLimits, { ...config.failedAttempts, trustProxyHops: config.trustProxyHops }),
      signInThrottle: new SignInThrottle(rateLimits, config.console.signInThrottle),
      passwords: options.passwords ?? argon2idPasswords(),
      adminToken,
      secretsKey,
      engines: createEngineRegistry(config.engines, logger),
      events,
      redis,
      actingApp: null,
      webhooks,
      instanceId: running.id,
      revocations,
      principals: new PrincipalCache(revocations, config.credentialCache),
      presentedMessages: new PresentedMessages(),
      eventStreams: new ConnectionSlots(),
      // Metrics are read through `app`: they are made below.
      liveStreams: new LiveStreamGroups(events, (event, stream, members) => deliverToGroup(app.metrics, event, stream, members)),
      shutdown: shutdown.signal,
      draining: draining.signal,
      // Read when scraped: the media plane exists by then.
      metrics: new Metrics(() => {
        const stats = media.stats();
        return {
          eventStreams: app.eventStreams.count(),
          mediaRooms: stats.rooms,
          interpreters: stats.interpreters,
          interpreterReconnects: stats.interpreterReconnects,
        };
      }),
      now: Date.now,
      audioSocketPort: config.audioSocketPort,
      // Read when asked: the media plane exists by then.
      liveCallStats: (callId) => media.liveStats(callId),
    };
    // Credits are not charges; test-mode charges are counted under their mode.
    observeLedger(app.db, (entry) => {
      if (entry.kind !== 'credit') app.metrics.ledgerCharges.inc({ kind: entry.kind, mode: entry.mode });
    });
    const stopJobs = startPeriodicJobs(app);
    const stopWebhooks = webhooks.start();
    const pendingHangUps = new Set<Promise<unknown>>();
    const stopHangUps = hangUpPhonesWhenCallsEnd(app, (work) => {
      pendingHangUps.add(work);
      void work.finally(() => pendingHangUps.delete(work));
    });

    const httpServer = createHttpServer(createApp(app), config.connections, logger);
    const media = createMediaPlane(
      { calls: storedCalls(app), funding: ledgerFunding(app.db), records: storedRecords(app), events: app.events, logger: app.logger, engines: app.engines,
        onLatency: (speaker, ms) => app.metrics.interpretationLatency.observe({ direction: speaker === 'agent' ? 'agent_to_customer' : 'customer_to_agent' }, ms / 1000) },
      options.media,
    );
    // Several instances: a socket that lands here for a call whose room is elsewhere is relayed to it.
    if (redis) {
      // Relayed media goes straight to the room's instance when the instances share SECRETS_KEY (a key file is this instance's alone).
      const links = config.secretsKey && config.mediaPeerPort !== null
        ? { secretsKey: config.secretsKey, listenHost: config.host, port: config.mediaPeerPort, advertisedHost: config.mediaPeerHost ?? defaultPeerHost(config.host) }
        : undefined;
      await RedisMediaBridge.start(media, { commands: redis.commands, subscriber: redis.mediaSubscriber, prefix: redis.prefix, instanceId: running.id, renewEveryMs: config.instanceHeartbeatMs / 2, logger, links });
    }
    // Whatever transports are listed: the plane counts and closes them, their gauges join /metrics,
    // their upgrade routes the HTTP server's, and their own listeners open once it listens.
    const transports = (options.transports ?? TRANSPORTS).map((make) => make({ plane: media, app }));
    for (const transport of transports) {
      media.addTransport(transport);
      for (const gauge of transport.metrics ?? []) app.metrics.addGauge(gauge);
    }
    const routes = transports.flatMap((transport) => transport.upgrades ?? []);
    routeUpgrades(httpServer, routes, { unmatched: REFUSAL.noEndpoint, failedAttempts: app.failedAttempts, logger });
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(config.port, config.host, resolve);
    });
    const { port } = httpServer.address() as AddressInfo;
    const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
    const ports: Record<string, number | null> = {};
    for (const transport of transports) if (transport.listen) ports[transport.name] = await transport.listen();

    let stopping: Promise<void> | undefined;
    // Once, whoever asks (a signal, a test, both).
    const stop = () => (stopping ??= stopOnce());
    const stopOnce = async () => {
      // Drain first: readiness answers 503 and no new media endpoints are taken, while the open calls
      // go on for the grace (with several instances, their clients' next sockets land elsewhere).
      draining.abort();
      await media.drain(config.shutdownGraceMs);
      // Stop accepting, let in-flight requests finish, end streams, drop idle keep-alive sockets.
      const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      shutdown.abort();
      httpServer.closeIdleConnections();
      await media.close();
      stopHangUps();
      await Promise.allSettled([...pendingHangUps]);
      await closed;
      stopJobs();
      await stopWebhooks();
      await running.stop();
      await rateLimits.close();
      app.principals.close();
      await stopRevocations();
      await redisEvents?.close();
      await redis?.close();
      await database.close();
    };
    const connectionStats = async (): Promise<ConnectionStats> => ({
      httpConnections: await new Promise<number>((resolve, reject) =>
        httpServer.getConnections((err, count) => (err ? reject(err) : resolve(count))),
      ),
      eventStreams: app.eventStreams.count(),
      transports: Object.fromEntries(transports.map((transport) => [transport.name, transport.openConnections()])),
    });
    return { app, url, port, banner, media, ports, connectionStats, stop };
  } catch (err) {
    await instance?.stop().catch(() => undefined);
    await stopRevocations().catch(() => undefined);
    await redisEvents?.close().catch(() => undefined);
    await redis?.close();
    await database.close();
    throw err;
  }
}
