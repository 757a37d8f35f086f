// `npm run test:postgres`: the whole vitest suite again, on real PostgreSQL. Uses TEST_DATABASE_URL, or
// a local server's `postgres` database; fails with a clear message when neither answers.
import { spawnSync } from 'node:child_process';
import pg from 'pg';

const url = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
try {
  await client.connect();
  await client.query('select 1');
} catch (err) {
  console.error(
    `PostgreSQL tests need a server: ${url} did not answer (${(err as Error).message}).\n` +
      'Set TEST_DATABASE_URL to a PostgreSQL URL whose role may create databases (.ci/run sets one up).',
  );
  process.exit(1);
} finally {
  await client.end().catch(() => {});
}

const result = spawnSync('npx', ['vitest', 'run', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, TEST_DATABASE_URL: url },
});
process.exit(result.status ?? 1);
