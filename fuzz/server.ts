// The server under test: `src/main.ts` as a real child process on a fresh database (a new PGlite data
// directory, or a new database on a PostgreSQL server), configured with no engines at all.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const OUTPUT_LINES_KEPT = 30;

export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface FuzzServer {
  url: URL;
  adminToken: string;
  backend: 'pglite' | 'postgres';
  /** Set once the process has ended. */
  exit(): ServerExit | undefined;
  /** The last lines the process wrote to stderr (and stdout, for a crash that logs there). */
  stderrTail(): string;
  stdoutTail(): string;
  stop(): Promise<ServerExit>;
}

export interface FuzzServerOptions {
  /** A PostgreSQL server whose role may create databases; without it, PGlite. */
  postgresUrl?: string;
  /** Check every answer against the contract (an answer outside it becomes a 500). */
  validateResponses: boolean;
}

/** The last lines of a stream that `keep` accepts, each clipped. */
function tail(stream: NodeJS.ReadableStream, keep: (line: string) => boolean, onLine?: (line: string) => void) {
  const lines: string[] = [];
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const line of parts) {
      onLine?.(line);
      if (!keep(line)) continue;
      lines.push(line.length > 1_000 ? `${line.slice(0, 1_000)}...` : line);
      if (lines.length > OUTPUT_LINES_KEPT) lines.shift();
    }
  });
  return () => [...lines, partial.slice(0, 1_000)].join('\n').trim();
}

/** pino's fatal lines and anything that is not a log line (a crash's trace); 5xx answers are in the report itself. */
const isErrorOutput = (line: string) => !/^\{"level":[1-5]\d,/.test(line);

async function createDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `fuzz_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * Only a guard against a start that hangs: the server says when it listens. A fresh embedded database
 * compiled by tsx on a machine busy with the rest of the suite has taken over a minute.
 */
const START_GUARD_MS = 180_000;

export async function startFuzzServer(options: FuzzServerOptions): Promise<FuzzServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'fuzz-data-'));
  const database = options.postgresUrl ? await createDatabase(options.postgresUrl) : undefined;
  const adminToken = `fuzz_admin_${randomBytes(24).toString('hex')}`;
  // Only what the server needs: no engine settings leak in from the caller's environment.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    AUDIOSOCKET_PORT: '0',
    LOG_LEVEL: 'info',
    VALIDATE_RESPONSES: String(options.validateResponses),
    // The fuzzer guesses wrong on purpose and fast: with the usual limits most of its requests would
    // stop at a 429 before reaching the code under test (the limits have tests of their own).
    FAILED_ATTEMPTS_PER_MINUTE: '1000000',
    RATE_LIMIT_PER_MINUTE: '1000000',
    // A throwaway key: the fuzzer's database is dropped afterwards.
    ...(database ? { DATABASE_URL: database.url, SECRETS_KEY: randomBytes(32).toString('base64') } : {}),
  };
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let exit: ServerExit | undefined;
  const exited = new Promise<ServerExit>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    }),
  );
  let listening: (url: URL) => void;
  const ready = new Promise<URL>((resolve) => (listening = resolve));
  const stdoutTail = tail(child.stdout!, isErrorOutput, (line) => {
    if (!line.includes('server listening')) return;
    try {
      listening(new URL(JSON.parse(line).url));
    } catch {
      // not the line it looked like
    }
  });
  const stderrTail = tail(child.stderr!, () => true);

  const cleanUp = async () => {
    await database?.drop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  };
  const startup = await Promise.race([
    ready,
    exited.then(() => undefined),
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), START_GUARD_MS).unref()),
  ]);
  if (!startup) {
    child.kill('SIGKILL');
    await exited;
    await cleanUp();
    throw new Error(`the server did not start (exit ${JSON.stringify(exit)}):\n${stderrTail()}\n${stdoutTail()}`);
  }

  return {
    url: startup,
    adminToken,
    backend: database ? 'postgres' : 'pglite',
    exit: () => exit,
    stderrTail,
    stdoutTail,
    async stop() {
      if (!exit) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      await cleanUp();
      return exit!;
    },
  };
}
