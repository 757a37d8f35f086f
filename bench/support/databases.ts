// The database a benchmark's server runs on: a fresh PGlite data directory, or a database the benchmark
// creates on a PostgreSQL server (DATABASE_URL, else TEST_DATABASE_URL, else the local default the tests
// use) and drops at the end.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { runAdmin, withDatabase } from '../../test/support/migratedDatabase.js';

export type Backend = 'pglite' | 'postgres';
export const BACKEND_NAMES: Record<Backend, string> = { pglite: 'PGlite', postgres: 'PostgreSQL' };

export const POSTGRES_ADMIN_URL =
  process.env.DATABASE_URL || process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  backend: Backend;
  /** The server's settings for it (DATA_DIR always: the server keeps its lock and bootstrap file there). */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function createBenchDatabase(backend: Backend, workDir: string): Promise<BenchDatabase> {
  const dataDir = await mkdtemp(path.join(workDir, `${backend}-`));
  const removeDir = () => rm(dataDir, { recursive: true, force: true });
  if (backend === 'pglite') return { backend, env: { DATA_DIR: dataDir }, drop: removeDir };
  const name = `bench_${randomBytes(6).toString('hex')}`;
  try {
    await runAdmin(POSTGRES_ADMIN_URL, `CREATE DATABASE ${name}`);
  } catch (err) {
    throw new Error(
      `could not create a database on ${redact(POSTGRES_ADMIN_URL)} (${(err as Error).message}); set DATABASE_URL to a PostgreSQL ` +
        'server whose role may create databases, or run with --db pglite',
    );
  }
  return {
    backend,
    env: { DATABASE_URL: withDatabase(POSTGRES_ADMIN_URL, name), DATA_DIR: dataDir },
    drop: async () => {
      await runAdmin(POSTGRES_ADMIN_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await removeDir();
    },
  };
}

export function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
