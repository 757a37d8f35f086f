// Start-up and shutdown: open the database, migrate, bootstrap, listen; on stop, drain and close.
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createApp } from './app.js';
import { LocalRevocationBus } from './auth/revocation.js';
import { createMediaPlane, type MediaPlane, type MediaPlaneOptions } from './calls/media/plane.js';
import { startAudioSocketServer } from './calls/media/transports/audiosocket/server.js';
import { attachWebSockets } from './calls/media/transports/websocket/server.js';
import type { AppContext } from './appContext.js';
import { bootstrap } from './bootstrap.js';
import type { Config } from './config.js';
import { openDatabase, type Database, type MemoryDatabase } from './db/database.js';
import { createEngineRegistry } from './engines/registry.js';
import { migrateToLatest } from './db/migrate.js';
import { LocalEventBus } from './events/bus.js';
import { startInstance, type RunningInstance } from './instances.js';
import { loggerFor } from './logging/logger.js';
import { createHttpServer } from './http/connections.js';
import { startPeriodicJobs } from './jobs.js';
import { FailedAttempts } from './ratelimit/failedAttempts.js';
import { MemoryRateLimitStore } from './ratelimit/memoryStore.js';
import { ConnectionSlots } from './realtime/connectionSlots.js';

export interface RunningServer {
  app: AppContext;
  url: string;
  port: number;
  banner: string | undefined;
  /** The media plane (WebSocket stream/listen sockets); tests configure it. */
  media: MediaPlane;
  /** The bound AudioSocket port (AUDIOSOCKET_PORT=0 picks one); null when it could not listen. */
  audioSocketPort: number | null;
  /** What the server holds open right now (tests check that nothing is left behind). */
  connectionStats(): Promise<ConnectionStats>;
  stop(): Promise<void>;
}

export interface ConnectionStats {
  /** TCP connections of the HTTP server, upgraded ones (WebSockets) included. */
  httpConnections: number;
  eventStreams: number;
  mediaSockets: number;
  /** AudioSocket connections, joined or not. */
  audioSocketConnections: number;
}

export interface StartOptions {
  /** Default: loggerFor(config). A logger given here should come from src/logging/logger.ts too. */
  logger?: Logger;
  /** Tests: in-memory PGlite instead of DATA_DIR, empty or from a snapshot. */
  memoryDatabase?: MemoryDatabase;
  /** Media plane settings (the billing interval, the clock). */
  media?: MediaPlaneOptions;
  /** The embedded database's worker thread stopped unasked (src/main.ts exits); default: logged. */
  onDatabaseLost?: (error: Error) => void;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? loggerFor(config);
  const database: Database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    memory: options.memoryDatabase,
    timeouts: config.databaseTimeouts,
    logger,
    onLost: options.onDatabaseLost,
  });
  let instance: RunningInstance | undefined;
  try {
    await migrateToLatest(database.knex);
    const { adminToken, banner } = await bootstrap(database.knex, config);
    // Registered before serving: every hold and running request names a live instance.
    const running = await startInstance(database.knex, {
      heartbeatMs: config.instanceHeartbeatMs,
      soleInstance: database.kind === 'pglite',
      logger,
    });
    instance = running;
    const rateLimits = new MemoryRateLimitStore();
    const shutdown = new AbortController();
    // Every open event stream listens for shutdown: there is no meaningful limit.
    setMaxListeners(0, shutdown.signal);
    const app: AppContext = {
      config,
      db: database.knex,
      logger,
      rateLimits,
      failedAttempts: new FailedAttempts(rateLimits, { ...config.failedAttempts, trustProxyHops: config.trustProxyHops }),
      adminToken,
      engines: createEngineRegistry(config.engines, logger),
      events: new LocalEventBus(),
      instanceId: running.id,
      revocations: new LocalRevocationBus((err) => logger.error({ err }, 'revocation: ending a stream failed')),
      eventStreams: new ConnectionSlots(),
      shutdown: shutdown.signal,
      audioSocketPort: config.audioSocketPort,
    };
    const stopJobs = startPeriodicJobs(app);

    const httpServer = createHttpServer(createApp(app), config.connections, logger);
    const media = createMediaPlane(app, options.media);
    attachWebSockets(httpServer, media, {
      events: app.events,
      failedAttempts: app.failedAttempts,
      socketsPerSide: config.connections.mediaSocketsPerSide,
    });
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(config.port, config.host, resolve);
    });
    const { port } = httpServer.address() as AddressInfo;
    const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
    const audioSocket = await startAudioSocketServer(media, {
      host: config.host,
      port: config.audioSocketPort,
      logger,
      failedAttempts: app.failedAttempts,
      uuidTimeoutMs: config.connections.audioSocketUuidTimeoutMs,
      idleTimeoutMs: config.connections.audioSocketIdleTimeoutMs,
    });
    // Phone-line answers name the port really bound (AUDIOSOCKET_PORT=0 picks a free one).
    if (audioSocket.port !== null) app.audioSocketPort = audioSocket.port;

    const stop = async () => {
      // Stop accepting, let in-flight requests finish, end streams, drop idle keep-alive sockets.
      const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      shutdown.abort();
      httpServer.closeIdleConnections();
      await media.close();
      await audioSocket.close();
      await closed;
      stopJobs();
      await running.stop();
      await rateLimits.close();
      await database.close();
    };
    const connectionStats = async (): Promise<ConnectionStats> => ({
      httpConnections: await new Promise<number>((resolve, reject) =>
        httpServer.getConnections((err, count) => (err ? reject(err) : resolve(count))),
      ),
      eventStreams: app.eventStreams.count(),
      mediaSockets: media.stats().sockets,
      audioSocketConnections: media.stats().audioSocketConnections,
    });
    return { app, url, port, banner, media, audioSocketPort: audioSocket.port, connectionStats, stop };
  } catch (err) {
    await instance?.stop().catch(() => undefined);
    await database.close();
    throw err;
  }
}
