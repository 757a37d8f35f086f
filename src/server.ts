// Start-up and shutdown: open the database, migrate, bootstrap, listen; on stop, drain and close.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { createApp } from './app.js';
import { startAudioSocketServer } from './calls/audiosocket/server.js';
import { createMediaPlane, type MediaPlane, type MediaPlaneOptions } from './calls/media/plane.js';
import type { AppContext } from './appContext.js';
import { bootstrap } from './bootstrap.js';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { LocalEventBus } from './events/bus.js';
import { startPeriodicJobs } from './jobs.js';
import { MemoryRateLimitStore } from './ratelimit/memoryStore.js';
import { createInterpreterFactory } from './interpretation/index.js';
import { createTranscriptionEngine } from './transcription/index.js';
import { createTranslationEngine } from './translation/engines/index.js';

export interface RunningServer {
  app: AppContext;
  url: string;
  port: number;
  banner: string | undefined;
  /** The media plane (WebSocket stream/listen sockets); tests configure it. */
  media: MediaPlane;
  /** The bound AudioSocket port (AUDIOSOCKET_PORT=0 picks one); null when it could not listen. */
  audioSocketPort: number | null;
  stop(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** Tests: in-memory PGlite instead of DATA_DIR. */
  memoryDatabase?: boolean;
  /** Media plane settings, e.g. the live interpreter factory. */
  media?: MediaPlaneOptions;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? pino({ level: config.logLevel });
  const database: Database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    memory: options.memoryDatabase,
    timeouts: config.databaseTimeouts,
    logger,
  });
  try {
    await migrateToLatest(database.knex);
    const { adminToken, banner } = await bootstrap(database.knex, config);
    const rateLimits = new MemoryRateLimitStore();
    const translationEngine = createTranslationEngine(config.engines);
    const shutdown = new AbortController();
    const app: AppContext = {
      config,
      db: database.knex,
      logger,
      rateLimits,
      adminToken,
      translationEngine,
      transcriptionEngine: createTranscriptionEngine(config.engines),
      events: new LocalEventBus(),
      shutdown: shutdown.signal,
      audioSocketPort: config.audioSocketPort,
    };
    const stopJobs = startPeriodicJobs(app);

    const httpServer = http.createServer(createApp(app));
    const media = createMediaPlane(app, {
      interpreterFactory: createInterpreterFactory(config.engines, logger),
      ...options.media,
    });
    media.attach(httpServer);
    await new Promise<void>((resolve, reject) => {
      httpServer.once('error', reject);
      httpServer.listen(config.port, config.host, resolve);
    });
    const { port } = httpServer.address() as AddressInfo;
    const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
    const audioSocket = await startAudioSocketServer(media, { host: config.host, port: config.audioSocketPort, logger });
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
      await rateLimits.close();
      await database.close();
    };
    return { app, url, port, banner, media, audioSocketPort: audioSocket.port, stop };
  } catch (err) {
    await database.close();
    throw err;
  }
}
