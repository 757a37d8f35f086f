// The real server (`src/main.ts`, as the run built it: test/support/serverBuild.ts) in a child process, for
// tests that kill it as a crash would (SIGKILL: no shutdown, no word to anyone).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { createTestDatabase } from './databases.js';

const root = path.resolve(import.meta.dirname, '../..');

export interface ChildServer {
  process: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  output(): string;
}

/**
 * Starts the server with `env` added to this process's and waits until it says it listens (its
 * log line, so the level is at least info); an exit before that fails at once.
 */
export async function startChildServer(env: Record<string, string>): Promise<ChildServer> {
  const child = spawn(process.execPath, [builtServer().entry], {
    cwd: root,
    // As test servers in process: Redis commands wait as long as the setting allows on a loaded machine.
    // Port 0, read back from the log line: a port chosen here and bound by the child later may be taken in
    // between by any socket of the run (a client's connection takes its local port from the same range).
    env: { ...process.env, REDIS_COMMAND_TIMEOUT_MS: '60000', ...env, LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk;
      const listening = output.split('\n').slice(0, -1).find((line) => line.includes('"msg":"server listening"'));
      if (listening) resolve((JSON.parse(listening) as { url: string }).url);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    void exited.then((code) => reject(new Error(`the server exited (${code}):\n${output}`)));
  });
  return { process: child, url, exited, output: () => output };
}

/** The run's build of the server (test/support/serverBuild.ts): its entry and its contract as JSON. */
export function builtServer(): { entry: string; contract: string } {
  const build = inject('serverBuild');
  return { entry: path.join(build, 'src/main.js'), contract: path.join(build, 'openapi/openapi.json') };
}

export interface ChildDatabase {
  /** On PostgreSQL; without it, the embedded database in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  drop(): Promise<void>;
}

/**
 * A fresh database with every migration applied, for a child server, where the test is not about a first
 * start (an initdb and the migrations cost about 7 s of CPU): on PostgreSQL one of the run's migrated
 * databases, on PGlite a DATA_DIR holding the run's migrated snapshot (test/support/migratedDatabase.ts), unpacked.
 */
export async function migratedChildDatabase(prefix: string): Promise<ChildDatabase> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const removeDataDir = () => rm(dataDir, { recursive: true, force: true });
  if (process.env.TEST_DATABASE_URL) {
    const database = await createTestDatabase({ migrated: true });
    return { databaseUrl: database.databaseUrl, dataDir, drop: () => Promise.all([database.drop(), removeDataDir()]).then(() => undefined) };
  }
  const pgdata = path.join(dataDir, 'pgdata');
  await mkdir(pgdata);
  // dumpDataDir's tar holds the data directory's files under /.
  await promisify(execFile)('tar', ['-xf', inject('pgliteSnapshot'), '-C', pgdata]);
  return { dataDir, drop: removeDataDir };
}
