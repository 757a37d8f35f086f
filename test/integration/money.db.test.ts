// Money under concurrency (meant for PostgreSQL, where requests really run in parallel; PGlite runs a
// smaller load): many billable requests against a small prepaid balance, and many concurrent retries of
// one Idempotency-Key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledged, billable, checkMoney, deliver, type BillableKind, type LoadTarget } from '../support/billableLoad.js';
import { backendName } from '../support/databases.js';
import { startDeepLStandIn, type DeepLStandIn } from '../support/standins/deeplStandIn.js';
import { startOpenAiTranscriptionStandIn, type OpenAiTranscriptionStandIn } from '../support/standins/openaiTranscriptionStandIn.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

const onPostgres = backendName === 'postgres';

describe(`money under concurrent load (${backendName})`, () => {
  let t: TestServer;
  let deepl: DeepLStandIn;
  let transcription: OpenAiTranscriptionStandIn;

  beforeAll(async () => {
    deepl = await startDeepLStandIn({ apiKey: 'deepl-money' });
    transcription = await startOpenAiTranscriptionStandIn({ apiKey: 'sk-money' });
    t = await startTestServer({
      TRANSLATION_ENGINE: 'deepl',
      DEEPL_API_KEY: 'deepl-money',
      DEEPL_BASE_URL: deepl.url,
      OPENAI_API_KEY: 'sk-money',
      OPENAI_BASE_URL: transcription.baseUrl,
      RATE_LIMIT_PER_MINUTE: '100000',
    });
  });
  afterAll(async () => {
    await t?.stop();
    await deepl?.close();
    await transcription?.close();
  });

  /** A live key and an open live session (agent en, customer fi) of a new organization. */
  const liveTarget = async (balance: number): Promise<LoadTarget & { orgId: string }> => {
    // One character costs 0.001, one second of voice 0.01.
    const orgId = await t.createOrg({ balance, text_rate_per_million_characters: 1_000, voice_rate_per_minute: 0.6 });
    const { id: keyId, key } = await t.createKey(orgId, 'live');
    const res = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_language: 'en', customer_language: 'fi' }),
    });
    expect(res.status).toBe(201);
    return { orgId, url: t.url, key, keyId, sessionId: (await res.json()).id };
  };

  it('hundreds of concurrent translations, messages and voice messages against a small balance: never below zero, every charge once and for something stored', async () => {
    const target = await liveTarget(2);
    const counts: Record<BillableKind, number> = onPostgres
      ? { translate: 250, message: 150, voice: 40 }
      : { translate: 80, message: 50, voice: 15 };
    // Interleaved, so every kind competes for the same money from the start.
    const longest = Math.max(...Object.values(counts));
    const requests = Array.from({ length: longest }, (_, n) =>
      (Object.keys(counts) as BillableKind[]).filter((kind) => n < counts[kind]).map((kind) => billable(target, kind, 'load', n)),
    ).flat();
    const sent = await Promise.all(requests.map((request) => deliver(request, t.url)));

    for (const request of sent) expect([200, 201, 402]).toContain(request.status);
    expect(sent.filter(acknowledged).length).toBeGreaterThan(10);
    expect(sent.filter((request) => request.status === 402).length).toBeGreaterThan(sent.length / 2);
    await checkMoney(t.server.app.db, target.orgId, sent);
  });

  it('concurrent voice messages against a balance that pays for a few: never more than it pays for', async () => {
    // 3 s cost 0.03, held together with 75 characters of translation (0.075); the transcript's translation
    // costs 0.024 (from the cache once it is there), so 0.3 pays for two or three at a time.
    const target = await liveTarget(0.3);
    const count = onPostgres ? 60 : 20;
    const sent = await Promise.all(Array.from({ length: count }, (_, n) => deliver(billable(target, 'voice', 'voices', n), t.url)));
    for (const request of sent) expect([201, 402]).toContain(request.status);
    const posted = sent.filter(acknowledged).length;
    expect(posted).toBeGreaterThanOrEqual(1);
    expect(posted).toBeLessThanOrEqual(10); // 0.3 pays for ten recordings at most
    await checkMoney(t.server.app.db, target.orgId, sent);
  });

  it('200 concurrent retries of a key whose first attempt was refused: only 2xx, 409 or 402, and one charge', async () => {
    const target = await liveTarget(0);
    const first = await deliver(billable(target, 'translate', 'retried', 0), t.url);
    expect(first.status).toBe(402);

    const retries = Array.from({ length: 200 }, () => deliver(billable(target, 'translate', 'retried', 0), t.url));
    // Money arrives while the retries are refused and let go of the key, racing the others' claims.
    await Promise.race(retries);
    const credit = await fetch(`${t.url}/admin/orgs/${target.orgId}/credit`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ amount: 1 }),
    });
    expect(credit.status).toBe(200);
    const answers = await Promise.all(retries);
    const final = await deliver(billable(target, 'translate', 'retried', 0), t.url);
    expect(final.status).toBe(200);

    for (const answer of answers) expect([200, 402, 409]).toContain(answer.status);
    const charges = await t.server.app.db('ledger_entries').where({ org_id: target.orgId, kind: 'text' });
    expect(charges).toHaveLength(1);
    expect(charges[0].request_ref).toBe(final.requestRef);
    for (const answer of [...answers, final].filter(acknowledged)) expect(answer.body).toEqual(final.body);
    await checkMoney(t.server.app.db, target.orgId, [final]);
  });
});
