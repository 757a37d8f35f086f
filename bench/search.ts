// npm run bench:search [-- --rows 1000000] [--seconds 10] [--clients 8]
//
// GET /v1/search on PostgreSQL (issue 35): a fresh database holding `rows` stored messages and utterances
// (half each, in one organization's test mode, over 10,000 calls and 10,000 chats; words drawn from a
// vocabulary of 5,000 with a skewed frequency, so some words are in a tenth of all rows and most in few),
// then `clients` clients asking one after another, each for `seconds`: one-word queries, two-word queries,
// and, as the baseline measured in the same run, GET /v1/calls/{id} (an authenticated read of one row).
// Prints p50/p95/p99 per row beside the baseline, and whether p95 stays under 100 ms.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import createKnex from 'knex';
import { startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { loggerFor } from '../src/observability/logger.js';
import { createBenchDatabase } from './support/databases.js';
import { distribution } from './support/stats.js';
import { num, table } from './support/format.js';
import { machineLine } from './support/machine.js';
import { newAdminToken } from './support/seed.js';
import { positiveInteger } from './support/options.js';

const { values: flags } = parseArgs({
  options: { rows: { type: 'string' }, seconds: { type: 'string' }, clients: { type: 'string' }, keep: { type: 'boolean', default: false } },
});
const ROWS = positiveInteger('rows', flags.rows, 1_000_000);
const SECONDS = positiveInteger('seconds', flags.seconds, 10);
const CLIENTS = positiveInteger('clients', flags.clients, 8);
const GOAL_P95_MS = 100;
const VOCABULARY = 5_000;
const OWNERS = 10_000;

/** Word number `i` of the vocabulary: pronounceable, distinct (w0 .. w4999 spelled with syllables). */
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'su', 'ta', 'vi', 'ro', 'pe', 'hu'];
const word = (i: number) => `${SYLLABLES[i % 10]}${SYLLABLES[Math.floor(i / 10) % 10]}${SYLLABLES[Math.floor(i / 100) % 10]}${i >= 1000 ? SYLLABLES[Math.floor(i / 1000)] : ''}`;

async function main(): Promise<void> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'lia-bench-search-'));
  const database = await createBenchDatabase('postgres', workDir);
  const adminToken = newAdminToken();
  const config = loadConfig({ ...database.env, PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: adminToken, SECRETS_KEY: randomBytes(32).toString('base64'), AUDIOSOCKET_PORT: '0', RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'warn' });
  const server = await startServer(config, { logger: loggerFor(config) });
  try {
    console.log(machineLine());
    const post = async (urlPath: string, token: string, body: unknown) => {
      const res = await fetch(server.url + urlPath, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`POST ${urlPath}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, any>;
    };
    const org = await post('/admin/orgs', adminToken, { name: 'Bench search', balance: 1000 });
    const { key } = await post(`/admin/orgs/${org.org_id}/keys`, adminToken, { mode: 'test' });
    const call = await post('/v1/calls', key, { agent_language: 'en', customer_language: 'fi' });

    const seeding = performance.now();
    await fill(database.env.DATABASE_URL!, org.org_id);
    console.log(`${num(ROWS)} rows stored and indexed in ${num((performance.now() - seeding) / 1000, 1)} s`);

    const auth = { Authorization: `Bearer ${key}` };
    const pick = () => word(Math.floor(Math.random() * VOCABULARY));
    const rows: Array<[string, () => string]> = [
      ['baseline: GET /v1/calls/{id}', () => `/v1/calls/${call.id}`],
      ['GET /v1/search, one word', () => `/v1/search?q=${pick()}`],
      ['GET /v1/search, two words', () => `/v1/search?q=${pick()}+${pick()}`],
    ];
    const results: string[][] = [['row', 'requests', 'p50 ms', 'p95 ms', 'p99 ms', 'hits per page (mean)']];
    const goals: string[] = [];
    for (const [label, target] of rows) {
      await load(server.url, target, auth, 1); // warm-up
      const { latencies, hits } = await load(server.url, target, auth, SECONDS);
      const d = distribution(latencies)!;
      const p95 = percentile(latencies, 0.95);
      results.push([label, num(d.count), num(d.p50, 1), num(p95, 1), num(d.p99, 1), hits === null ? '' : num(hits, 1)]);
      if (label.startsWith('GET /v1/search')) goals.push(`${label}: p95 ${num(p95, 1)} ms ${p95 < GOAL_P95_MS ? 'met' : 'NOT met'} (goal < ${GOAL_P95_MS} ms)`);
    }
    console.log(`\n${CLIENTS} clients, ${SECONDS} s per row, PostgreSQL, ${num(ROWS)} messages and utterances\n`);
    console.log(table(results));
    console.log(`\n${goals.join('\n')}`);
  } finally {
    await server.stop();
    if (flags.keep) console.log(`kept: ${database.env.DATABASE_URL} (drop it when done)`);
    else await database.drop();
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Stores half the rows as utterances of OWNERS calls and half as messages of OWNERS sessions, in SQL (minutes, not hours). */
async function fill(databaseUrl: string, orgId: string): Promise<void> {
  const db = createKnex({ client: 'pg', connection: databaseUrl, pool: { min: 1, max: 1 } });
  try {
    // A PostgreSQL array literal (the words are letters only).
    const words = `{${Array.from({ length: VOCABULARY }, (_, i) => word(i)).join(',')}}`;
    // Skewed: word i is drawn with probability falling with i (random()^3), as words are in speech.
    const text = (count: number) => `(select string_agg((?::text[])[1 + floor(${VOCABULARY} * power(random(), 3))::int], ' ') from generate_series(1, ${count} + (g * 0)))`;
    await db.raw('drop index call_utterances_search');
    await db.raw('drop index messages_search');
    await db.raw(
      `insert into calls (id, org_id, mode, status, agent_language, agent_name, customer_language, metadata, video, agent_key_hash, customer_key_hash, created_at, ended_at)
       select 'call_bench' || g, ?, 'test', 'ended', 'en', 'Alice', 'fi', '{}', false, 'x', 'x', now(), now() from generate_series(1, ${OWNERS}) g`,
      [orgId],
    );
    await db.raw(
      `insert into sessions (id, org_id, mode, status, agent_language, agent_name, customer_language, customer_key_hash, metadata, created_at)
       select 'ses_bench' || g, ?, 'test', 'closed', 'en', 'Alice', 'fi', 'x', '{}', now() from generate_series(1, ${OWNERS}) g`,
      [orgId],
    );
    const half = Math.floor(ROWS / 2);
    const batch = 50_000;
    for (let start = 0; start < half; start += batch) {
      const count = Math.min(batch, half - start);
      const at = `now() - make_interval(secs => ${half} - (g + ${start}))`;
      await db.raw(
        `insert into call_utterances (org_id, mode, call_id, side, speaker, language, text, translation_language, translation_text, started_at, ended_at, offset_ms, created_at)
         select ?, 'test', 'call_bench' || (1 + (g + ${start}) % ${OWNERS}), 'agent', 'Alice', 'en', ${text(8)}, 'fi', ${text(8)}, ${at}, ${at}, 0, ${at}
         from generate_series(1, ${count}) g`,
        [orgId, words, words],
      );
      await db.raw(
        `insert into messages (org_id, mode, session_id, sender, author_name, kind, text, language, agent_text, customer_text, translations, created_at)
         select ?, 'test', 'ses_bench' || (1 + (g + ${start}) % ${OWNERS}), 'customer', 'Matti', 'text', t, 'fi', t, t, '{}', ${at}
         from (select g, ${text(10)} as t from generate_series(1, ${count}) g) made`,
        [orgId, words],
      );
    }
    await db.raw('create index call_utterances_search on call_utterances using gin (search)');
    await db.raw('create index messages_search on messages using gin (search)');
    await db.raw('analyze');
  } finally {
    await db.destroy();
  }
}

/** CLIENTS clients asking one after another for `seconds`: each request's latency, and the mean hits of search pages. */
async function load(baseUrl: string, target: () => string, headers: Record<string, string>, seconds: number) {
  const latencies: number[] = [];
  let hits = 0;
  let pages = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const res = await fetch(baseUrl + target(), { headers });
        const body = (await res.json()) as { hits?: unknown[] };
        latencies.push(performance.now() - started);
        if (!res.ok) throw new Error(`${target()}: ${res.status} ${JSON.stringify(body)}`);
        if (body.hits) {
          hits += body.hits.length;
          pages++;
        }
      }
    }),
  );
  return { latencies, hits: pages ? hits / pages : null };
}

const percentile = (values: number[], q: number) => {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

await main();
