import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
// knex is CommonJS and Node cannot see its named exports: only the default import works.
import createKnex, { type Knex } from 'knex';
import ClientPGLite from 'knex-pglite';
// knex's own PostgreSQL dialect, to name prepared statements (./prepared.ts); knex types only its instance.
import PostgresDialect from 'knex/lib/dialects/postgres/index.js';
import PgTransaction from 'knex/lib/dialects/postgres/execution/pg-transaction.js';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseTimeouts } from '../config.js';
import { ConnectionGate, type Leave } from './connectionGate.js';
import { lockDataDir } from './dataDirLock.js';
import { isStalePlan } from './errors.js';
import type { PgliteWorkerData } from './pgliteProtocol.js';
import type { PgStatementsWorkerData } from './pgStatementsProtocol.js';
import { PgliteThread } from './pgliteThread.js';
import { PgStatementsThread } from './pgStatementsThread.js';
import { driverOptions, forgetPreparedStatement } from './prepared.js';
import type { NamedStatement, NamedStatementRunner } from './statement.js';
import { pgTypes } from './types.js';

/**
 * knex's client for the embedded database. Its one connection is shared by single statements and had
 * alone by a transaction (./connectionGate.ts) instead of lent by knex's pool one user at a time.
 * knex-pglite names a statement's command after knex's method, so a delete comes back as `DEL` and
 * knex's pg dialect, which reads the row count of `DELETE`, would hand back the raw result instead.
 */
class EmbeddedClient extends ClientPGLite implements NamedStatementRunner {
  /**
   * Shared with the copies knex makes of a client (per-user-params instances, the migrator), which
   * take over its fields with lodash's merge: a class instance is passed on as it is, where a field
   * of their own would have them take a second connection from the pool of one.
   */
  private readonly connection = new SharedConnection();

  private onlyConnection(): Promise<unknown> {
    return (this.connection.only ??= ClientPGLite.prototype.acquireConnection.call(this));
  }

  private enter(alone: boolean): Promise<Leave> {
    const timeoutMs = (this.config as Knex.Config).acquireConnectionTimeout;
    const timeoutError = () => new createKnex.KnexTimeoutError('Knex: Timeout acquiring a connection. The embedded database is busy.');
    return this.connection.gate.enter(alone, timeoutMs, timeoutError);
  }

  /** A single statement's connection: shared with the other statements in flight. */
  override async acquireConnection(): Promise<unknown> {
    const leave = await this.enter(false);
    try {
      const connection = await this.onlyConnection();
      this.connection.sharing.push(leave);
      return connection;
    } catch (error) {
      leave();
      throw error;
    }
  }

  override async releaseConnection(): Promise<void> {
    this.connection.sharing.pop()?.();
  }

  /** A written statement on the shared connection, past knex's builder and runner (./statement.ts). */
  async namedRows(statement: NamedStatement, values: readonly unknown[]): Promise<unknown[]> {
    const connection = (await this.acquireConnection()) as PgliteThread;
    try {
      announceQuery(this, statement, values);
      return (await connection.query(statement.text, [...values])).rows;
    } finally {
      await this.releaseConnection();
    }
  }

  /** Runs `work` with the connection and nobody else on it (a transaction, from BEGIN to its end). */
  async alone<T>(work: (connection: unknown) => Promise<T>): Promise<T> {
    const leave = await this.enter(true);
    try {
      return await work(await this.onlyConnection());
    } finally {
      leave();
    }
  }

  override transaction(container: unknown, config: unknown, outerTx: unknown): Knex.Transaction {
    return new EmbeddedTransaction(this, container, config, outerTx) as unknown as Knex.Transaction;
  }

  /**
   * As knex's pool would: what is running (statements, a transaction) finishes first, since whoever
   * closes the database or takes a lent one back comes right after.
   */
  override async destroy(callback?: () => void): Promise<void> {
    const leave = await this.connection.gate.enter(true, undefined, () => new Error('unreachable: no timeout'));
    try {
      const { only } = this.connection;
      this.connection.only = undefined;
      if (only) await ClientPGLite.prototype.releaseConnection.call(this, await only);
    } finally {
      leave();
    }
    return ClientPGLite.prototype.destroy.call(this, callback);
  }

  // Not in knex's public typings, but every dialect has it: it turns a driver's answer into knex's.
  processResponse(obj: { method?: string }, runner: unknown): unknown {
    const base = ClientPGLite.prototype as unknown as { processResponse(obj: unknown, runner: unknown): unknown };
    return base.processResponse.call(this, obj.method === 'del' ? { ...obj, method: 'delete' } : obj, runner);
  }

  _query(connection: unknown, obj: CompiledStatement): Promise<unknown> {
    const base = ClientPGLite.prototype as unknown as DialectQuery;
    return base._query.call(this, connection, { ...obj, options: driverOptions(obj.sql, obj.options, false) });
  }
}

/**
 * Statements sent ahead to the embedded database's worker at most: unbounded, their answers came back in
 * bursts that held the event loop up (delay p99 21 ms under load, against 15-17 ms with 4), for no more
 * throughput (bench:rest on PGlite, reads 1.4-1.5 times the requests per second of one at a time either way).
 */
const STATEMENTS_IN_FLIGHT = 4;

/** The embedded database's only connection, and who is using it. */
class SharedConnection {
  readonly gate = new ConnectionGate(STATEMENTS_IN_FLIGHT);
  /** Taken from knex's pool once and kept: the gate decides who uses it. */
  only: Promise<unknown> | undefined;
  /** One per statement using the connection now (they are interchangeable). */
  readonly sharing: Leave[] = [];
}

/** A transaction on the embedded database: it has the connection alone (savepoints share their transaction's). */
class EmbeddedTransaction extends PgTransaction {
  override acquireConnection(config: Record<string, unknown> | undefined, cb: (connection: unknown) => Promise<unknown>): Promise<unknown> {
    if (this.outerTx) return super.acquireConnection(config, cb);
    return (this.client as unknown as EmbeddedClient).alone((connection) => super.acquireConnection({ ...config, connection }, cb));
  }
}

/** A statement as knex hands it to a dialect: its SQL, bindings and driver options. */
interface CompiledStatement {
  sql: string;
  bindings?: unknown[];
  options?: Record<string, unknown>;
}

/** Every knex dialect's `_query`, which sends a compiled statement on a connection (not in knex's typings). */
interface DialectQuery {
  _query(connection: unknown, obj: CompiledStatement): Promise<unknown>;
}

/** A pooled node-postgres connection, with what knex and node-postgres keep on it. */
type PooledConnection = pg.Client & {
  readyForQuery?: boolean;
  /** Set by knex while the connection runs a transaction. */
  __knexTxId?: unknown;
  /** Prepared statements on it went stale inside a transaction: replaced rather than reused. */
  stalePlans?: boolean;
};

/** knex's configuration of the PostgreSQL client, with the statements' worker thread (./pgStatementsThread.ts). */
type PostgresConfig = Knex.Config & { statementsThread?: PgStatementsThread };

/** knex's PostgreSQL dialect, which sends statements marked `prepared` as named prepared statements. */
class PostgresClient extends PostgresDialect implements NamedStatementRunner {
  async _query(connection: unknown, obj: CompiledStatement): Promise<unknown> {
    const base = PostgresDialect.prototype as unknown as DialectQuery;
    const statement = { ...obj, options: driverOptions(obj.sql, obj.options, true) };
    const { statementsThread } = this.config as PostgresConfig;
    const name = statement.options?.name;
    // A marked statement outside a transaction, with no driver option but its name, needs nothing of
    // this connection: the worker sends it instead (as knex's pg dialect does, the answer goes on `obj`).
    const outsideTransaction = (connection as PooledConnection).__knexTxId === undefined;
    if (typeof name === 'string' && Object.keys(statement.options!).length === 1 && outsideTransaction && statementsThread?.running) {
      return Object.assign(obj, { response: await statementsThread.run({ name, text: obj.sql }, obj.bindings ?? []) });
    }
    try {
      return await base._query.call(this, connection, statement);
    } catch (error) {
      if (typeof name !== 'string' || !isStalePlan(error)) throw error;
      await forgetStalePlan(connection as PooledConnection, name, error);
      return base._query.call(this, connection, statement);
    }
  }

  /**
   * A named statement past knex's builder and runner (./statement.ts): sent by the statements' worker thread,
   * or, once that has ended (closing, or lost), on a connection of knex's pool.
   */
  async namedRows(statement: NamedStatement, values: readonly unknown[]): Promise<unknown[]> {
    announceQuery(this, statement, values);
    const { statementsThread } = this.config as PostgresConfig;
    if (statementsThread?.running) return (await statementsThread.run(statement, values)).rows;
    const connection = (await this.acquireConnection()) as PooledConnection;
    const send = async () => (await connection.query({ ...statement, values: [...values] })).rows;
    try {
      return await send();
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      await forgetStalePlan(connection, statement.name, error);
      return await send();
    } finally {
      await this.releaseConnection(connection);
    }
  }
}

/** As knex's runner does: whoever watches the statements sent (round-trip counts, knex's debug log) sees these too. */
function announceQuery(client: object, statement: NamedStatement, values: readonly unknown[]): void {
  (client as NodeJS.EventEmitter).emit('query', { sql: statement.text, bindings: values, method: 'raw' });
}

/**
 * After a stale prepared statement: outside a transaction it is deallocated, to be prepared again with
 * the columns the table has now. In a transaction the failure has aborted it, so nothing more can run
 * on the connection now: the request fails (503, try again) and the pool replaces the connection
 * instead of reusing it.
 */
async function forgetStalePlan(connection: PooledConnection, name: string, error: unknown): Promise<void> {
  if (connection.__knexTxId !== undefined) {
    connection.stalePlans = true;
    throw error;
  }
  await forgetPreparedStatement(connection, name);
}

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
  /**
   * PGlite: called when its worker thread stops unasked (every statement fails from then on). The
   * server exits on it (src/main.ts); without it the failure is only logged.
   */
  onLost?: (error: Error) => void;
  /** PostgreSQL: where the statements thread comes from; default, started with the database and closed with it. */
  statementsThreads?: StatementsThreads;
}

/**
 * Where a PostgreSQL database's statements thread comes from. A server starts one and closes it with the
 * database; tests, which start a server for nearly every file, lend a worker's threads from server to
 * server instead (test/support/databases.ts): a thread's start costs about 0.2 s of CPU (its isolate and
 * node-postgres), 0.3 s under tsx.
 */
export interface StatementsThreads {
  take(data: PgStatementsWorkerData): PgStatementsThread;
  /** The database is closing: the thread is no longer this server's. */
  release(thread: PgStatementsThread): Promise<void>;
}

const ownThread: StatementsThreads = { take: (data) => new PgStatementsThread(data), release: (thread) => thread.close() };

/**
 * `true`: an empty in-memory PGlite. `snapshot`: one that starts from a data directory saved with
 * PGlite's `dumpDataDir()` (tests start every server from one migrated snapshot instead of an initdb each).
 * `lease`: one that is already open and stays open when the server closes (tests reuse a worker's).
 */
export type MemoryDatabase = boolean | { snapshot: Blob } | { lease: EmbeddedLease };

/** An open embedded database lent to a server: closing the server gives it back instead of closing it. */
export interface EmbeddedLease {
  thread: PgliteThread;
  giveBack(): Promise<void>;
}

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts);
  if (!opts.memory) return openPgliteOnDisk(opts.dataDir, opts);
  if (opts.memory !== true && 'lease' in opts.memory) return openLeased(opts.memory.lease, opts);
  const loadDataDir = opts.memory === true ? undefined : await opts.memory.snapshot.arrayBuffer();
  return openPglite({ loadDataDir }, opts);
}

type Settings = Pick<OpenDatabaseOptions, 'timeouts' | 'logger' | 'onLost' | 'statementsThreads'>;

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

/**
 * Connections of the statements' worker thread, besides knex's 10: its statements are single statements
 * of a millisecond or less outside transactions, which a few connections keep up with (bench:rest's 16 clients).
 */
const WORKER_POOL_SIZE = 4;
/** How the worker's connections show in pg_stat_activity (unless DATABASE_URL names an application). */
export const WORKER_APPLICATION_NAME = 'live-interpretation-api worker';

async function openPostgres(databaseUrl: string, { timeouts, logger, statementsThreads = ownThread }: Settings): Promise<Database> {
  const connection = { connectionString: databaseUrl, keepAlive: true, ...pgTimeouts(timeouts) };
  const statementsThread = statementsThreads.take({ connection: { ...connection, application_name: WORKER_APPLICATION_NAME }, poolSize: WORKER_POOL_SIZE });
  const knex = createKnex({
    log: knexLog(logger),
    client: PostgresClient,
    statementsThread,
    connection: { ...connection, types: pgTypes },
    pool: {
      min: 0,
      max: 10,
      // A connection whose statement the client gave up on (query_timeout) still waits for its answer:
      // it is not reused but replaced, so one stalled socket does not keep failing requests. So is one
      // whose prepared statements went stale in a transaction (PostgresClient).
      validate: (connection: PooledConnection) => connection.readyForQuery !== false && !connection.stalePlans,
    },
    acquireConnectionTimeout: timeouts?.acquireMs,
  } as PostgresConfig);
  const close = async () => {
    await statementsThreads.release(statementsThread);
    await knex.destroy();
  };
  return { knex, kind: 'postgres', close };
}

async function openPgliteOnDisk(dataDir: string, settings: Settings): Promise<Database> {
  const release = await lockDataDir(dataDir);
  try {
    const pgdata = join(dataDir, 'pgdata');
    await mkdir(pgdata, { recursive: true });
    if (!existsSync(join(pgdata, 'PG_VERSION'))) await initDataDir(pgdata);
    const database = await openPglite({ dataDir: pgdata }, settings);
    return { ...database, close: () => closeThen(database, release) };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * Creates a new data directory (initdb) in a worker of its own that then ends: initdb's WebAssembly
 * memory, which never shrinks, goes with it instead of staying in the server's for good.
 */
async function initDataDir(pgdata: string): Promise<void> {
  const setup = await PgliteThread.start({ dataDir: pgdata });
  await setup.waitReady;
  await setup.close();
}

async function closeThen(database: Database, release: () => Promise<void>): Promise<void> {
  try {
    await database.close();
  } finally {
    await release();
  }
}

/** PGlite in its own worker thread, so its statements never block this one. */
async function openPglite(data: Pick<PgliteWorkerData, 'dataDir' | 'loadDataDir'>, settings: Settings): Promise<Database> {
  const { logger, onLost } = settings;
  const pglite = await PgliteThread.start(data, {
    onLost: onLost ?? ((err) => logger?.fatal({ err }, 'the embedded database stopped; every request fails until a restart')),
  });
  await pglite.waitReady; // surfaces a broken data directory here, not at the first query
  const knex = embeddedKnex(pglite, settings);
  const close = async () => {
    await knex.destroy(); // closes PGlite too, if knex ever opened its connection
    await pglite.close();
  };
  return { knex, kind: 'pglite', close };
}

async function openLeased({ thread, giveBack }: EmbeddedLease, settings: Settings): Promise<Database> {
  await thread.waitReady;
  // knex closes its only connection when destroyed: the lender's database must stay open.
  const lent = { waitReady: thread.waitReady, query: thread.query.bind(thread), close: async () => {}, get closed() { return thread.closed; } };
  const knex = embeddedKnex(lent, settings);
  return { knex, kind: 'pglite', close: () => knex.destroy().finally(giveBack) };
}

function embeddedKnex(pglite: Pick<PgliteThread, 'waitReady' | 'query' | 'close' | 'closed'>, { timeouts, logger }: Settings): Knex {
  return createKnex({
    client: EmbeddedClient,
    log: knexLog(logger),
    connection: () => ({ pglite }) as Knex.StaticConnectionConfig,
    // PGlite runs one statement at a time and has no statement timeout: what applies is how long a
    // request waits for its single connection.
    acquireConnectionTimeout: timeouts?.acquireMs,
  });
}
