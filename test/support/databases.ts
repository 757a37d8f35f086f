import { randomBytes } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { inject } from 'vitest';
import type { EmbeddedLease, MemoryDatabase } from '../../src/db/database.js';
import { PgliteThread } from '../../src/db/pgliteThread.js';
import { runAdmin, withDatabase } from './migratedDatabase.js';

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
 * A fresh database for one test file: a new database on the TEST_DATABASE_URL
 * server (so test files never see each other's rows), or an in-memory PGlite.
 */
export async function createTestDatabase({ migrated = false }: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return { memory: migrated ? { lease: await leaseMigrated() } : { snapshot: await snapshotFile('pgliteEmptySnapshot') }, drop: async () => {} };
  const name = `t_${randomBytes(6).toString('hex')}`;
  await runAdmin(adminUrl, `CREATE DATABASE ${name}${migrated ? ` TEMPLATE ${provided('postgresTemplate')}` : ''}`);
  return {
    databaseUrl: withDatabase(adminUrl, name),
    memory: false,
    // FORCE: a test that failed midway may still hold connections.
    drop: () => runAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
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
  const schema = await schemaFingerprint(thread);
  return {
    thread,
    async giveBack() {
      // A database whose tables a test changed, or whose worker ended, is not lent again.
      if (thread.closed || (await schemaFingerprint(thread).catch(() => null)) !== schema || !(await emptied(thread))) {
        await thread.close();
        return;
      }
      idle.push(thread);
    },
  };
}

async function schemaFingerprint(thread: PgliteThread): Promise<string> {
  const { rows } = await thread.query(
    `SELECT md5(string_agg(table_name || '.' || column_name || ':' || data_type || ':' || coalesce(column_default, ''), ',' ORDER BY table_name, column_name)) AS fingerprint
     FROM information_schema.columns WHERE table_schema = 'public'`,
  );
  return (rows[0] as { fingerprint: string }).fingerprint;
}

/** Back to the state of the migrated snapshot: no rows, sequences at their start, nothing held by the session. */
async function emptied(thread: PgliteThread): Promise<boolean> {
  try {
    await thread.query('ROLLBACK'); // a transaction a failed test left open (only a warning when none is)
    await thread.query('DISCARD ALL'); // locks, listeners, prepared statements, settings
    const { rows } = await thread.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_migrations%'`);
    const tables = (rows as { tablename: string }[]).map((row) => `"${row.tablename}"`);
    if (tables.length) await thread.query(`TRUNCATE ${tables.join(', ')} RESTART IDENTITY CASCADE`);
    return true;
  } catch {
    return false;
  }
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
