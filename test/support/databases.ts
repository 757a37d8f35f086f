import { openAsBlob } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { WORKER_APPLICATION_NAME, type EmbeddedLease, type MemoryDatabase, type StatementsThreads } from '../../src/db/database.js';
import { PgliteThread } from '../../src/db/pgliteThread.js';
import { PgStatementsThread } from '../../src/db/pgStatementsThread.js';
import { runAdmin, runDatabaseName, withDatabase } from './migratedDatabase.js';

/** Which backend the database tests run on; set TEST_DATABASE_URL for PostgreSQL. */
export const backendName: 'postgres' | 'pglite' = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

export interface TestDatabase {
  databaseUrl?: string;
  /** In-memory PGlite (from the run's empty or migrated snapshot); false on PostgreSQL. */
  memory: MemoryDatabase;
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /**
   * Start with every migration applied, from what test/support/migratedDatabase.ts made once for the
   * run (a PGlite snapshot, or a PostgreSQL template database). Default: empty.
   */
  migrated?: boolean;
}

/**
 * A fresh database for one test file: a database of its own on the TEST_DATABASE_URL server (so test files
 * never see each other's rows), or an in-memory PGlite.
 */
export async function createTestDatabase({ migrated = false }: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return { memory: migrated ? { lease: await leaseMigrated() } : { snapshot: await snapshotFile('pgliteEmptySnapshot') }, drop: async () => {} };
  if (migrated) return leaseMigratedPostgres(adminUrl);
  const name = runDatabaseName(provided('postgresTemplate'));
  await runAdmin(adminUrl, `CREATE DATABASE ${name}`);
  return { databaseUrl: withDatabase(adminUrl, name), memory: false, drop: () => dropDatabase(adminUrl, name) };
}

/**
 * Migrated PostgreSQL databases that servers of earlier test files gave back, emptied, by template. As with
 * PGlite below: CREATE DATABASE copies the template (about 0.5 s) and DROP DATABASE makes the server
 * checkpoint (1-2 s on a busy machine), where emptying one costs a few DELETEs (emptyTables). The run's teardown
 * drops them (migratedDatabase.ts).
 */
const idlePostgres = new Map<string, string[]>();
/** The migrated schema's fingerprint, taken from the first database lent (a process tests one backend). */
let migratedFingerprint: Promise<string> | undefined;

async function leaseMigratedPostgres(adminUrl: string): Promise<TestDatabase> {
  const template = provided('postgresTemplate');
  const idle = idlePostgres.get(template) ?? [];
  idlePostgres.set(template, idle);
  let name = idle.pop();
  if (!name) {
    name = runDatabaseName(template);
    await runAdmin(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  }
  const databaseUrl = withDatabase(adminUrl, name);
  migratedFingerprint ??= withClient(databaseUrl, schemaFingerprint);
  const leased = name;
  idleThreads.set(databaseUrl, idleThreads.get(databaseUrl) ?? new Map());
  return {
    databaseUrl,
    memory: false,
    async drop() {
      // A database whose tables a test changed, or that cannot be emptied, is not lent again.
      if (await emptiedPostgres(adminUrl, databaseUrl, leased, await migratedFingerprint!)) return void idle.push(leased);
      await Promise.all([...idleThreads.get(databaseUrl)!.values()].flat().map((thread) => thread.close()));
      idleThreads.delete(databaseUrl);
      await dropDatabase(adminUrl, leased);
    },
  };
}

/**
 * The statements threads of servers on lent PostgreSQL databases (src/db/database.ts), kept open, connected,
 * while their database waits for its next server: by database, then by the thread's settings (a test may set
 * other timeouts). A thread for an address that is not a lent database (a proxy a test puts in between) is
 * the server's own, as outside tests.
 */
const idleThreads = new Map<string, Map<string, PgStatementsThread[]>>();
const lentThreads = new WeakMap<PgStatementsThread, { databaseUrl: string; settings: string }>();

export const lentStatementsThreads: StatementsThreads = {
  take(data) {
    const databaseUrl = data.connection.connectionString;
    const threads = idleThreads.get(databaseUrl);
    if (!threads) return new PgStatementsThread(data);
    const settings = JSON.stringify(data);
    const thread = threads.get(settings)?.pop() ?? new PgStatementsThread(data);
    lentThreads.set(thread, { databaseUrl, settings });
    return thread;
  },
  async release(thread) {
    const lent = lentThreads.get(thread);
    const threads = lent && idleThreads.get(lent.databaseUrl);
    if (!lent || !threads || !thread.running) return thread.close();
    threads.set(lent.settings, [...(threads.get(lent.settings) ?? []), thread]);
  },
};

/**
 * Back to the template's state: nobody connected but the lent statements threads (a server a test killed may
 * have left connections), no rows, sequences at their start.
 */
async function emptiedPostgres(adminUrl: string, databaseUrl: string, name: string, fingerprint: string): Promise<boolean> {
  try {
    await runAdmin(
      adminUrl,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid() AND application_name <> '${WORKER_APPLICATION_NAME}'`,
    );
    return await withClient(databaseUrl, async (query) => {
      if ((await schemaFingerprint(query)) !== fingerprint) return false;
      await emptyTables(query);
      return true;
    });
  } catch {
    return false;
  }
}

/** FORCE: a test that failed midway may still hold connections. */
const dropDatabase = (adminUrl: string, name: string) => runAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);

type Query = (sql: string) => Promise<{ rows: unknown[] }>;

async function withClient<T>(databaseUrl: string, work: (query: Query) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work((sql) => client.query(sql));
  } finally {
    await client.end();
  }
}

const snapshots = new Map<SnapshotKey, Promise<Blob>>();

/**
 * Migrated in-memory databases that servers of earlier test files gave back, emptied again. Opening
 * one from the snapshot costs a worker thread and PGlite's start (about a second of CPU); emptying a
 * returned one costs a few statements, and test files of a vitest worker run one after another.
 */
const idle: PgliteThread[] = [];

async function leaseMigrated(): Promise<EmbeddedLease> {
  const thread = idle.pop() ?? (await PgliteThread.start({ loadDataDir: await (await snapshotFile('pgliteSnapshot')).arrayBuffer() }));
  const query: Query = (sql) => thread.query(sql);
  // Every thread starts from the same snapshot, and one given back was checked: one fingerprint serves all.
  migratedFingerprint ??= schemaFingerprint(query);
  const schema = await migratedFingerprint;
  return {
    thread,
    async giveBack() {
      // A database whose tables a test changed, or whose worker ended, is not lent again.
      if (thread.closed || (await schemaFingerprint(query).catch(() => null)) !== schema || !(await emptied(thread))) {
        await thread.close();
        return;
      }
      idle.push(thread);
    },
  };
}

/**
 * The public tables' columns, their types and defaults, in one hash (from the catalogue: the
 * information_schema view of the same took twice as long on PGlite).
 */
async function schemaFingerprint(query: Query): Promise<string> {
  const { rows } = await query(
    `SELECT md5(string_agg(c.relname || '.' || a.attname || ':' || format_type(a.atttypid, a.atttypmod) || ':' || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ',' ORDER BY c.relname, a.attname)) AS fingerprint
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped`,
  );
  return (rows[0] as { fingerprint: string }).fingerprint;
}

/** Back to the state of the migrated snapshot: nothing held by the session, no rows, sequences at their start. */
async function emptied(thread: PgliteThread): Promise<boolean> {
  try {
    await thread.query('ROLLBACK'); // a transaction a failed test left open (only a warning when none is)
    await thread.query('DISCARD ALL'); // locks, listeners, prepared statements, settings
    await emptyTables((sql) => thread.query(sql));
    return true;
  } catch {
    return false;
  }
}

/**
 * The rows of every table that has any deleted, children before their parents, and the sequences a test
 * used restarted. A DELETE of a test's few rows costs about a millisecond; a TRUNCATE makes new files for
 * the table and its indexes, and of all 31 tables cost 160 ms of CPU on PGlite (most of what giving a
 * database back cost).
 */
async function emptyTables(query: Query): Promise<void> {
  const tables = await (deletionOrder ??= childrenFirst(query));
  const { rows } = await query(tables.map((table) => `SELECT '${table}' AS name WHERE EXISTS (SELECT FROM "${table}")`).join(' UNION ALL '));
  const filled = new Set((rows as { name: string }[]).map((row) => row.name));
  for (const table of tables) if (filled.has(table)) await query(`DELETE FROM "${table}"`);
  await query(
    `SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false) FROM pg_sequences
     WHERE schemaname = 'public' AND last_value IS NOT NULL AND sequencename NOT LIKE 'knex_migrations%'`,
  );
}

/** The migrated schema's tables, each after every table whose foreign keys point at it (the schema is the same for every database lent). */
let deletionOrder: Promise<string[]> | undefined;

async function childrenFirst(query: Query): Promise<string[]> {
  const { rows: tableRows } = await query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_migrations%' ORDER BY tablename`);
  const { rows: keyRows } = await query(
    `SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
     WHERE k.contype = 'f' AND k.conrelid <> k.confrelid`,
  );
  const children = new Map<string, string[]>();
  for (const { child, parent } of keyRows as { child: string; parent: string }[]) children.set(parent, [...(children.get(parent) ?? []), child]);
  const order: string[] = [];
  const placed = new Set<string>();
  const place = (table: string) => {
    if (placed.has(table)) return;
    placed.add(table);
    (children.get(table) ?? []).forEach(place);
    order.push(table);
  };
  (tableRows as { tablename: string }[]).forEach(({ tablename }) => place(tablename));
  return order;
}

type SnapshotKey = 'pgliteSnapshot' | 'pgliteEmptySnapshot';

/** A data directory the run saved (migratedDatabase.ts), opened once per worker (a Blob backed by the file, not a copy). */
function snapshotFile(key: SnapshotKey): Promise<Blob> {
  let snapshot = snapshots.get(key);
  if (!snapshot) snapshots.set(key, (snapshot = openAsBlob(provided(key))));
  return snapshot;
}

function provided<K extends SnapshotKey | 'postgresTemplate'>(key: K): string {
  const value = inject(key);
  if (!value) throw new Error(`no ${key}: test/support/migratedDatabase.ts makes it as the database project's globalSetup (vitest.config.ts)`);
  return value;
}
