// The floor of a read (bench/floor.ts): Express 5 answering GET /v1/account from one named prepared
// statement on PostgreSQL (DATABASE_URL), through node-postgres with the project's pool size, as JSON
// of the shape the project answers; nothing else (no authentication, validation, rate limit or log).
// Every other path answers 200 (readiness).
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
await pool.query(`CREATE TABLE IF NOT EXISTS floor_organizations (
  id text PRIMARY KEY, name text NOT NULL, currency text NOT NULL, balance_micros bigint, held_micros bigint NOT NULL,
  text_rate_micros bigint NOT NULL, voice_rate_micros bigint NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
await pool.query(`INSERT INTO floor_organizations VALUES ('org_floor', 'Bench', 'EUR', 1000000000, 0, 20000000, 100000)
  ON CONFLICT DO NOTHING`);

const organization = { name: 'organization', text: 'SELECT * FROM floor_organizations WHERE id = $1' };
const app = express();
app.get('/v1/account', async (_req, res) => {
  const [row] = (await pool.query({ ...organization, values: ['org_floor'] })).rows;
  res.json({
    org_id: row.id,
    org_name: row.name,
    currency: row.currency,
    balance: Number(row.balance_micros) / 1e6,
    text_rate_per_million_characters: Number(row.text_rate_micros) / 1e6,
    voice_rate_per_minute: Number(row.voice_rate_micros) / 1e6,
    mode: 'test',
  });
});
app.use((_req, res) => res.send('ok'));
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
