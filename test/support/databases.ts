import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Which backend the integration tests run on; set TEST_DATABASE_URL for PostgreSQL. */
export const backendName: 'postgres' | 'pglite' = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';

export interface TestDatabase {
  databaseUrl?: string;
  memory: boolean;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database for one test file: a new database on the TEST_DATABASE_URL
 * server (so test files never see each other's rows), or an in-memory PGlite.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return { memory: true, drop: async () => {} };
  const name = `t_${randomBytes(6).toString('hex')}`;
  await runAdmin(adminUrl, `CREATE DATABASE ${name}`);
  return {
    databaseUrl: withDatabase(adminUrl, name),
    memory: false,
    // FORCE: a test that failed midway may still hold connections.
    drop: () => runAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function runAdmin(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
