import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite, types as pgliteTypes, type PGliteOptions } from '@electric-sql/pglite';
// knex is CommonJS and Node cannot see its named exports: only the default import works.
import createKnex, { type Knex } from 'knex';
import ClientPGLite from 'knex-pglite';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseTimeouts } from '../config.js';
import { lockDataDir } from './dataDirLock.js';

export interface Database {
  knex: Knex;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL connection string; without it an embedded PGlite is used. */
  databaseUrl?: string;
  /** PGlite keeps its files in `<dataDir>/pgdata`. */
  dataDir: string;
  /** PGlite in memory (tests): nothing on disk, so no lock either. */
  memory?: MemoryDatabase;
  /** Without them, the drivers' own (which wait a minute or for ever). */
  timeouts?: DatabaseTimeouts;
  /** Where knex's warnings go (a lost connection, a failed acquire); without it, the console. */
  logger?: Logger;
}

/**
 * `true`: an empty in-memory PGlite. `snapshot`: one that starts from a data directory saved with
 * PGlite's `dumpDataDir()` (tests start every server from one migrated snapshot instead of an initdb each).
 */
export type MemoryDatabase = boolean | { snapshot: Blob };

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts);
  if (!opts.memory) return openPgliteOnDisk(opts.dataDir, opts);
  return openPglite({ loadDataDir: opts.memory === true ? undefined : opts.memory.snapshot }, opts);
}

type Settings = Pick<OpenDatabaseOptions, 'timeouts' | 'logger'>;

const logEntry = (message: unknown) => (message instanceof Error ? { err: message } : { database: message });

const knexLog = (logger: Logger | undefined): Knex.Logger | undefined =>
  logger && {
    warn: (message) => logger.warn(logEntry(message), 'database warning'),
    error: (message) => logger.error(logEntry(message), 'database error'),
    debug: (message) => logger.debug(logEntry(message), 'database debug'),
    deprecate: (method, alternative) => logger.warn(`knex: ${method} is deprecated, use ${alternative}`),
  };

/**
 * A statement that PostgreSQL itself does not answer (a stalled server, a paused network) is given up
 * on this long after the statement timeout would have cancelled it on a server that does answer.
 */
const READ_TIMEOUT_GRACE_MS = 1_000;

/** pg's settings for the timeouts: the server cancels slow statements, the client gives up on silent ones. */
const pgTimeouts = (timeouts: DatabaseTimeouts | undefined) =>
  timeouts && {
    statement_timeout: timeouts.statementMs,
    query_timeout: timeouts.statementMs + READ_TIMEOUT_GRACE_MS,
    connectionTimeoutMillis: timeouts.connectMs,
  };

type Parser = (value: string) => unknown;

// One table for both drivers, so a row reads the same whichever backend served it:
// by default pg reads int8 as a string and PGlite as a number or BigInt, both read
// numeric as a string, and they turn a date into different Dates.
const OID = {
  bool: 16,
  int8: 20,
  json: 114,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  jsonb: 3802,
} as const;

// Array type OID -> element type OID, for the types above.
const ARRAY_ELEMENT: Record<number, number> = {
  1000: OID.bool,
  1016: OID.int8,
  199: OID.json,
  1182: OID.date,
  1115: OID.timestamp,
  1185: OID.timestamptz,
  1231: OID.numeric,
  3807: OID.jsonb,
};

const parsers: Record<number, Parser> = {
  [OID.bool]: (value) => value === 't',
  [OID.int8]: parseInt8,
  [OID.json]: (value) => JSON.parse(value),
  // A calendar date is not an instant: as a Date it would shift with the time zone.
  [OID.date]: (value) => value,
  // pg's own parsers: they know PostgreSQL's output format, infinity and BC years.
  [OID.timestamp]: pg.types.getTypeParser(OID.timestamp, 'text'),
  [OID.timestamptz]: pg.types.getTypeParser(OID.timestamptz, 'text'),
  [OID.numeric]: (value) => Number(value),
  [OID.jsonb]: (value) => JSON.parse(value),
};

function parseInt8(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) {
    throw new Error(
      `int8 value ${value} is beyond Number.MAX_SAFE_INTEGER and cannot be read as a JS number exactly; select it as ::text instead.`,
    );
  }
  return number;
}

/** Per-client parsers for pg, so other pg users in the process keep the global defaults. */
const pgTypes: Knex.PgCustomTypesConfig = {
  getTypeParser(oid, format) {
    if (format === 'text') {
      const parser = parserForPg(oid);
      if (parser) return parser;
    }
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

// PGlite applies element parsers inside arrays by itself; pg needs an array parser.
function parserForPg(oid: number): Parser | undefined {
  const element = ARRAY_ELEMENT[oid];
  const parseElement = element === undefined ? undefined : parsers[element];
  if (!parseElement) return parsers[oid];
  return (value) => pgliteTypes.arrayParser(value, parseElement, oid);
}

async function openPostgres(databaseUrl: string, { timeouts, logger }: Settings): Promise<Database> {
  const knex = createKnex({
    log: knexLog(logger),
    client: 'pg',
    connection: { connectionString: databaseUrl, types: pgTypes, keepAlive: true, ...pgTimeouts(timeouts) },
    pool: {
      min: 0,
      max: 10,
      // A connection whose statement the client gave up on (query_timeout) still waits for its answer:
      // it is not reused but replaced, so one stalled socket does not keep failing requests.
      validate: (connection: pg.Client & { readyForQuery?: boolean }) => connection.readyForQuery !== false,
    },
    acquireConnectionTimeout: timeouts?.acquireMs,
  });
  return { knex, kind: 'postgres', close: () => knex.destroy() };
}

async function openPgliteOnDisk(dataDir: string, settings: Settings): Promise<Database> {
  const release = await lockDataDir(dataDir);
  try {
    const pgdata = join(dataDir, 'pgdata');
    await mkdir(pgdata, { recursive: true });
    const database = await openPglite({ dataDir: pgdata }, settings);
    return { ...database, close: () => closeThen(database, release) };
  } catch (error) {
    await release();
    throw error;
  }
}

async function closeThen(database: Database, release: () => Promise<void>): Promise<void> {
  try {
    await database.close();
  } finally {
    await release();
  }
}

/** Where PGlite's data comes from: a directory on disk, a saved data directory, or neither (empty, in memory). */
type PgliteData = Pick<PGliteOptions, 'dataDir' | 'loadDataDir'>;

async function openPglite(data: PgliteData, { timeouts, logger }: Settings): Promise<Database> {
  const pglite = new PGlite({ ...data, parsers, serializers: pgliteSerializers });
  try {
    await pglite.waitReady; // surfaces a broken data directory here, not at the first query
  } catch (error) {
    await pglite.close().catch(() => undefined);
    throw error;
  }
  const knex = createKnex({
    client: ClientPGLite,
    log: knexLog(logger),
    connection: () => ({ pglite }) as Knex.StaticConnectionConfig,
    // PGlite runs one statement at a time in this process and has no statement timeout: what applies is
    // how long a request waits for its single connection.
    acquireConnectionTimeout: timeouts?.acquireMs,
  });
  const close = async () => {
    await knex.destroy(); // closes PGlite too, if knex ever opened its connection
    if (!pglite.closed) await pglite.close();
  };
  return { knex, kind: 'pglite', close };
}

/**
 * pg sends a Date as local time with its offset, so a `timestamp` or `date` column
 * stores the local wall clock; PGlite would send UTC. Sending what pg sends keeps
 * written values, and their round trip through the parsers, the same on both.
 */
const pgliteSerializers: Record<number, (value: unknown) => string> = {
  [OID.date]: serializeLikePg,
  [OID.timestamp]: serializeLikePg,
};

function serializeLikePg(value: unknown): string {
  return value instanceof Date ? localTimestamp(value) : String(value);
}

function localTimestamp(date: Date): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const day = `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
  return `${day}T${time}${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
}
