import { writeSync } from 'node:fs';
import { ConfigError, loadConfig } from './config.js';
import { DataDirLockedError } from './db/dataDirLock.js';
import { createLogger } from './observability/logger.js';
import { startServer } from './app/server.js';

// Before the configuration is read: the shapes of secrets are still scrubbed.
const bootLogger = createLogger({ level: 'info' });

async function main() {
  const config = loadConfig();
  const server = await startServer(config, {
    // Every statement would fail from now on: exit, so a supervisor restarts the server on its data.
    // Written to fd 2 with a synchronous write, so the line is out before the exit whatever stderr is.
    onDatabaseLost: (err) => {
      writeSync(2, `the embedded database stopped (its worker thread ended); exiting: ${err.message}\n`);
      process.exit(1);
    },
  });
  server.app.logger.info({ url: server.url, publicBaseUrl: config.publicBaseUrl }, 'server listening');
  if (server.banner) process.stdout.write(server.banner + '\n');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.logger.info({ signal }, 'shutting down');
    await server.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof DataDirLockedError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    bootLogger.fatal({ err }, 'server failed to start');
  }
  process.exit(1);
});
