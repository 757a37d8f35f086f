// kill -9 under load: the real server in a child process (on-disk PGlite in a temp DATA_DIR, or
// PostgreSQL with TEST_DATABASE_URL) takes billable translations, messages and voice messages, dies
// mid-load, and starts again. Every acknowledged message must be there, every charge must pay for
// something stored, nothing may stay held or "running", and the unanswered requests, retried with
// their Idempotency-Keys, must run (or replay) without 409 and without paying twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { acknowledged, billable, checkMoney, deliver, deliverPatiently, type BillableKind, type LoadTarget, type SentRequest } from '../support/billableLoad.js';
import { migratedChildDatabase, startChildServer, type ChildDatabase, type ChildServer } from '../support/childServer.js';
import { backendName } from '../support/databases.js';
import { waitUntil } from '../support/waiting.js';
import { startDeepLStandIn, type DeepLStandIn } from '../support/standins/deeplStandIn.js';
import { startOpenAiTranscriptionStandIn, type OpenAiTranscriptionStandIn } from '../support/standins/openaiTranscriptionStandIn.js';
import { TEST_SECRETS_KEY } from '../support/testServer.js';

const ADMIN_TOKEN = 'adm_crash_test_0123456789abcdefXYZ';

describe(`kill -9 under load (${backendName})`, () => {
  let deepl: DeepLStandIn;
  let transcription: OpenAiTranscriptionStandIn;
  let database: ChildDatabase;
  const children: ChildServer[] = [];

  beforeAll(async () => {
    deepl = await startDeepLStandIn({ apiKey: 'deepl-crash' });
    transcription = await startOpenAiTranscriptionStandIn({ apiKey: 'sk-crash' });
    database = await migratedChildDatabase('lia-crash-');
  });
  afterAll(async () => {
    for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
    await Promise.all(children.map((child) => child.exited));
    await deepl?.close();
    await transcription?.close();
    await database?.drop();
  });

  const env = () => ({
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl, SECRETS_KEY: TEST_SECRETS_KEY } : { DATABASE_URL: '' }),
    DATA_DIR: database.dataDir,
    ADMIN_TOKEN,
    AUDIOSOCKET_PORT: '0',
    TRANSLATION_ENGINE: 'deepl',
    DEEPL_API_KEY: 'deepl-crash',
    DEEPL_BASE_URL: deepl.url,
    OPENAI_API_KEY: 'sk-crash',
    OPENAI_BASE_URL: transcription.baseUrl,
    RATE_LIMIT_PER_MINUTE: '100000',
    // A killed instance is known dead within a second (three missed heartbeats).
    INSTANCE_HEARTBEAT_MS: '250',
  });
  const start = async () => {
    const child = await startChildServer(env());
    children.push(child);
    return child;
  };
  const call = async (url: string, method: string, route: string, token: string, body?: unknown) => {
    const res = await fetch(`${url}${route}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status, `${method} ${route}`).toBeLessThan(300);
    return res.json();
  };
  /** The database, opened by the test once no server holds it (PGlite is single-process). */
  const withDatabase = async (work: (db: Database) => Promise<void>) => {
    const db = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    try {
      await work(db);
    } finally {
      await db.close();
    }
  };

  it('keeps every acknowledged message and every charge together, frees what the dead process held, and lets its requests be retried', async () => {
    const first = await start();
    const org = await call(first.url, 'POST', '/admin/orgs', ADMIN_TOKEN, {
      name: 'Crash Test',
      balance: 20,
      text_rate_per_million_characters: 1_000,
      voice_rate_per_minute: 0.6,
    });
    const key = await call(first.url, 'POST', `/admin/orgs/${org.org_id}/keys`, ADMIN_TOKEN, { mode: 'live' });
    const session = await call(first.url, 'POST', '/v1/sessions', key.key, { agent_language: 'en', customer_language: 'fi' });
    const target: LoadTarget = { url: first.url, key: key.key, keyId: key.id, sessionId: session.id };

    // Load: workers send translations, messages and (fewer) voice messages until the process is killed.
    const kinds: BillableKind[] = ['translate', 'message', 'translate', 'message', 'voice'];
    const sent: SentRequest[] = [];
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const n = sent.length;
        const request = billable(target, kinds[n % kinds.length], 'crash', n);
        sent.push(request);
        await deliver(request, first.url);
      }
    };
    const workers = Array.from({ length: 24 }, worker);
    await waitUntil(async () => sent.filter(acknowledged).length >= 60, 'some requests were answered');
    first.process.kill('SIGKILL');
    killed = true;
    await Promise.all(workers);
    expect(await first.exited).toBeNull(); // killed by the signal, no exit code
    expect(sent.filter((request) => request.status === null).length).toBeGreaterThan(0);
    // 503 is the busy database's "come back after Retry-After" (a loaded machine sees it): nothing was
    // done, and the client sends it again, as it does what got no answer.
    for (const request of sent) expect([200, 201, 402, 503, null]).toContain(request.status);
    const unanswered = sent.filter((request) => request.status === null || request.status === 503);

    const second = await start();
    if (database.databaseUrl) {
      // Several instances may share PostgreSQL: the dead one is recognised by its lapsed lease.
      await withDatabase(async ({ knex }) =>
        waitUntil(async () => (await knex('instances').count({ n: '*' }).first())!.n === 1, 'the killed instance is reaped'),
      );
    }
    const retried = await Promise.all(unanswered.map((request) => deliverPatiently(request, second.url)));
    for (const request of retried) expect([200, 201, 402], `retry of ${request.idempotencyKey}`).toContain(request.status);

    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    await withDatabase(async ({ knex }) => {
      await checkMoney(knex, org.org_id, sent);
      expect(await knex('instances')).toEqual([]);
    });
  });
});
