import { randomBytes } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { inject } from 'vitest';
import type { MemoryDatabase } from '../../src/db/database.js';
import { runAdmin, withDatabase } from './migratedDatabase.js';

/** Which backend the database tests run on; set TEST_DATABASE_URL for PostgreSQL. */
export const backendName: 'postgres' | 'pglite' = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

export interface TestDatabase {
  databaseUrl?: string;
  /** In-memory PGlite (empty, or from the run's migrated snapshot); false on PostgreSQL. */
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
  if (!adminUrl) return { memory: migrated ? { snapshot: await pgliteSnapshot() } : true, drop: async () => {} };
  const name = `t_${randomBytes(6).toString('hex')}`;
  await runAdmin(adminUrl, `CREATE DATABASE ${name}${migrated ? ` TEMPLATE ${provided('postgresTemplate')}` : ''}`);
  return {
    databaseUrl: withDatabase(adminUrl, name),
    memory: false,
    // FORCE: a test that failed midway may still hold connections.
    drop: () => runAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

let snapshot: Promise<Blob> | undefined;

/** The migrated data directory, read once per worker (a Blob backed by the file, not a copy). */
function pgliteSnapshot(): Promise<Blob> {
  snapshot ??= openAsBlob(provided('pgliteSnapshot'));
  return snapshot;
}

function provided<K extends 'pgliteSnapshot' | 'postgresTemplate'>(key: K): string {
  const value = inject(key);
  if (!value) throw new Error(`no ${key}: test/support/migratedDatabase.ts makes it as the database project's globalSetup (vitest.config.ts)`);
  return value;
}
