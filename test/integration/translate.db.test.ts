import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startDeepLStandIn } from '../support/standins/deeplStandIn.js';
import { startLibreTranslateStandIn } from '../support/standins/libreTranslateStandIn.js';
import { startOpenAiStandIn } from '../support/standins/openaiStandIn.js';
import type { StandInServer } from '../support/standins/standInServer.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const translate = (t: TestServer, key: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${t.url}/v1/translate`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const ledgerOf = (t: TestServer, orgId: string) =>
  t.server.app.db('ledger_entries').where({ org_id: orgId }).orderBy('id');

const balanceOf = async (t: TestServer, orgId: string) =>
  (await t.server.app.db('organizations').where({ id: orgId }).first()).balance_micros as number | null;

describe(`POST /v1/translate in test mode (${backendName})`, () => {
  let t: TestServer;
  let testKey: string;
  let orgId: string;
  beforeAll(async () => {
    t = await startTestServer();
    orgId = await t.createOrg({ balance: 0 });
    testKey = (await t.createKey(orgId, 'test')).key;
  });
  afterAll(() => t?.stop());

  it('answers with the stand-in, free, even with an empty balance', async () => {
    const res = await translate(t, testKey, { target: 'fi', text: 'Where is my order?' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      target: 'fi',
      translations: [{ text: '[fi] Where is my order?', translated: true, detected_source_language: 'en' }],
      characters_billed: 0,
      charged: 0,
      currency: 'EUR',
    });
    expect(await ledgerOf(t, orgId)).toHaveLength(0);
  });

  it('keeps the order of up to 100 texts and leaves text already in the target language as is', async () => {
    const texts = Array.from({ length: 100 }, (_, i) => `Text number ${i}`);
    texts[3] = 'Hei, tilaukseni on myöhässä ja odotan sitä kovasti.';
    const res = await translate(t, testKey, { target: 'fi', text: texts, source: null });
    const body = await res.json();
    expect(body.translations).toHaveLength(100);
    expect(body.translations[0].text).toBe('[fi] Text number 0');
    expect(body.translations[99].text).toBe('[fi] Text number 99');
    expect(body.translations[3]).toEqual({ text: texts[3], translated: false, detected_source_language: 'fi' });
  });

  it('trusts a given source language over detection', async () => {
    const res = await translate(t, testKey, { target: 'en', text: 'Bonjour', source: 'EN' });
    expect((await res.json()).translations[0]).toEqual({ text: 'Bonjour', translated: false, detected_source_language: 'EN' });
  });

  it('refuses more than 50,000 characters in all, 100 texts, or 10,000 in one, with 422', async () => {
    const tooManyInAll = await translate(t, testKey, { target: 'fi', text: Array(6).fill('a'.repeat(9_000)) });
    expect(tooManyInAll.status).toBe(422);
    expect((await tooManyInAll.json()).detail[0]).toMatchObject({ loc: ['body', 'text'], type: 'maxTotalLength' });
    expect((await translate(t, testKey, { target: 'fi', text: Array(101).fill('a') })).status).toBe(422);
    expect((await translate(t, testKey, { target: 'fi', text: 'a'.repeat(10_001) })).status).toBe(422);
    expect((await translate(t, testKey, { target: 'fi', text: 'a', context: 'c'.repeat(501) })).status).toBe(422);
    expect((await translate(t, testKey, { target: 'f', text: 'a' })).status).toBe(422);
    // Exactly at the limits is fine: 5 x 10,000 characters.
    expect((await translate(t, testKey, { target: 'fi', text: Array(5).fill('b'.repeat(10_000)) })).status).toBe(200);
  });

  it('counts characters as Unicode code points for the limits', async () => {
    const emoji = '😀'.repeat(10_000); // 20,000 UTF-16 units, 10,000 characters
    expect((await translate(t, testKey, { target: 'fi', text: emoji })).status).toBe(200);
  });
});

describe(`POST /v1/translate in live mode without an engine (${backendName})`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it('answers 502 naming the missing setting, and bills nothing', async () => {
    const orgId = await t.createOrg({ balance: 5 });
    const { key } = await t.createKey(orgId, 'live');
    const res = await translate(t, key, { target: 'fi', text: 'Where is my order?' });
    expect(res.status).toBe(502);
    expect((await res.json()).detail).toMatch(/OPENAI_API_KEY, DEEPL_API_KEY or LIBRETRANSLATE_URL/);
    expect(await ledgerOf(t, orgId)).toHaveLength(1); // the opening credit only
  });

  it('answers 402 before anything else once a prepaid balance has run out', async () => {
    const orgId = await t.createOrg({ balance: 0 });
    const { key } = await t.createKey(orgId, 'live');
    expect((await translate(t, key, { target: 'fi', text: 'Where is my order?' })).status).toBe(402);
  });
});

type EngineCase = {
  name: string;
  start: () => Promise<StandInServer & { url: string }>;
  env: (standIn: any) => Record<string, string>;
  expected: (text: string) => string;
};

const engines: EngineCase[] = [
  {
    name: 'openai',
    start: () => startOpenAiStandIn({ apiKey: 'sk-test' }),
    env: (s) => ({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: s.baseUrl }),
    expected: (text) => `fi:${text}`,
  },
  {
    name: 'deepl',
    start: () => startDeepLStandIn({ apiKey: 'deepl-key' }),
    env: (s) => ({ DEEPL_API_KEY: 'deepl-key', DEEPL_BASE_URL: s.url }),
    expected: (text) => `fi:${text}`,
  },
  {
    name: 'libretranslate',
    start: () => startLibreTranslateStandIn({ apiKey: 'lt-key' }),
    env: (s) => ({ LIBRETRANSLATE_URL: s.url, LIBRETRANSLATE_API_KEY: 'lt-key' }),
    expected: (text) => `fi:${text}`,
  },
];

for (const engine of engines) {
  describe(`POST /v1/translate in live mode through ${engine.name} (${backendName})`, () => {
    let t: TestServer;
    let upstream: StandInServer;
    beforeAll(async () => {
      upstream = await engine.start();
      t = await startTestServer(engine.env(upstream));
    });
    afterAll(async () => {
      await t?.stop();
      await upstream?.close();
    });

    it('translates, bills exactly per character through the ledger, and serves repeats from the cache', async () => {
      const orgId = await t.createOrg({ balance: 1, text_rate_per_million_characters: 20 });
      const { key } = await t.createKey(orgId, 'live');
      const texts = ['Where is my order?', 'It was shipped yesterday, thank you.'];
      const characters = texts.join('').length; // 18 + 36
      upstream.reset();
      const res = await translate(t, key, { target: 'fi', text: texts, source: 'en' });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.translations.map((x: { text: string }) => x.text)).toEqual(texts.map(engine.expected));
      expect(body.characters_billed).toBe(characters);
      expect(body.charged).toBe(Number(((characters * 20) / 1e6).toFixed(6)));
      expect(body.currency).toBe('EUR');
      const charges = (await ledgerOf(t, orgId)).filter((row) => row.kind === 'text');
      expect(charges).toHaveLength(1);
      expect(charges[0]).toMatchObject({ quantity: characters, amount_micros: -characters * 20, mode: 'live' });
      expect(await balanceOf(t, orgId)).toBe(1_000_000 - characters * 20);
      const upstreamCalls = upstream.requests.length;

      const again = await (await translate(t, key, { target: 'fi', text: texts, source: 'en' })).json();
      expect(again.translations).toEqual(body.translations);
      expect(again.characters_billed).toBe(0);
      expect(again.charged).toBe(0);
      expect(upstream.requests.length).toBe(upstreamCalls);
      expect((await ledgerOf(t, orgId)).filter((row) => row.kind === 'text')).toHaveLength(1);
    });

    it('answers 502 and bills nothing when the engine keeps failing', async () => {
      const orgId = await t.createOrg({ balance: 1 });
      const { key } = await t.createKey(orgId, 'live');
      upstream.reset();
      upstream.failNext(10, 500);
      const res = await translate(t, key, { target: 'fi', text: 'A text that fails upstream' });
      expect(res.status).toBe(502);
      expect((await res.json()).detail).toMatch(new RegExp(engine.name));
      expect((await ledgerOf(t, orgId)).filter((row) => row.kind === 'text')).toHaveLength(0);
      expect(await balanceOf(t, orgId)).toBe(1_000_000);
      upstream.reset();
    });
  });
}

describe(`money and retries (${backendName})`, () => {
  let t: TestServer;
  let upstream: Awaited<ReturnType<typeof startOpenAiStandIn>>;
  beforeAll(async () => {
    upstream = await startOpenAiStandIn({ apiKey: 'sk-test' });
    t = await startTestServer({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: upstream.baseUrl });
  });
  afterAll(async () => {
    await t?.stop();
    await upstream?.close();
  });

  it('never refuses an invoiced organization for money and books its charges', async () => {
    const orgId = await t.createOrg({ balance: null });
    const { key } = await t.createKey(orgId, 'live');
    const res = await translate(t, key, { target: 'de', text: 'Invoiced text', source: 'en' });
    expect(res.status).toBe(200);
    expect((await res.json()).characters_billed).toBe(13);
    expect(await balanceOf(t, orgId)).toBeNull();
    expect((await ledgerOf(t, orgId)).map((row) => row.amount_micros)).toEqual([-260]);
  });

  it('replays a retried request with the same Idempotency-Key without charging again', async () => {
    const orgId = await t.createOrg({ balance: 1 });
    const { key } = await t.createKey(orgId, 'live');
    const body = { target: 'sv', text: 'Please retry me safely', source: 'en' };
    const first = await translate(t, key, body, { 'Idempotency-Key': 'retry-1' });
    const firstBody = await first.json();
    const second = await translate(t, key, { source: 'en', text: 'Please retry me safely', target: 'sv' }, { 'Idempotency-Key': 'retry-1' });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await second.json()).toEqual(firstBody);
    expect(firstBody.characters_billed).toBe(22);
    expect((await ledgerOf(t, orgId)).filter((row) => row.kind === 'text')).toHaveLength(1);

    const reused = await translate(t, key, { ...body, text: 'Something else' }, { 'Idempotency-Key': 'retry-1' });
    expect(reused.status).toBe(422);
    expect((await reused.json()).detail[0]).toMatchObject({ loc: ['header', 'Idempotency-Key'], type: 'idempotency_key_reused' });

    // The same key from another API key is another key.
    const other = await t.createKey(orgId, 'live');
    const fromOther = await translate(t, other.key, body, { 'Idempotency-Key': 'retry-1' });
    expect(fromOther.headers.get('idempotent-replayed')).toBeNull();
  });

  it('does not store a failed answer: the retry runs again', async () => {
    const orgId = await t.createOrg({ balance: 1 });
    const { key } = await t.createKey(orgId, 'live');
    upstream.failNext(10, 503);
    const body = { target: 'sv', text: 'Fails first, then works', source: 'en' };
    expect((await translate(t, key, body, { 'Idempotency-Key': 'after-failure' })).status).toBe(502);
    upstream.reset();
    const retry = await translate(t, key, body, { 'Idempotency-Key': 'after-failure' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect((await retry.json()).characters_billed).toBe(23);
  });

  it('runs two concurrent requests with one key once', async () => {
    const orgId = await t.createOrg({ balance: 1 });
    const { key } = await t.createKey(orgId, 'live');
    const body = { target: 'da', text: 'Concurrent twins', source: 'en' };
    const answers = await Promise.all([1, 2, 3].map(() => translate(t, key, body, { 'Idempotency-Key': 'twins' })));
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
    for (const status of statuses) expect([200, 409]).toContain(status);
    expect((await ledgerOf(t, orgId)).filter((row) => row.kind === 'text')).toHaveLength(1);
  });

  it('rejects an Idempotency-Key longer than 255 characters', async () => {
    const orgId = await t.createOrg({ balance: 1 });
    const { key } = await t.createKey(orgId, 'live');
    const res = await translate(t, key, { target: 'fi', text: 'x' }, { 'Idempotency-Key': 'k'.repeat(256) });
    expect(res.status).toBe(422);
  });

  it('keeps the ledger and the balance consistent under concurrent load', async () => {
    const orgId = await t.createOrg({ balance: 100, text_rate_per_million_characters: 7.5 });
    const { key } = await t.createKey(orgId, 'live');
    const requests = 100;
    const answers = await Promise.all(
      Array.from({ length: requests }, (_, i) =>
        translate(t, key, { target: 'fi', text: `Concurrent request number ${i} asks for a translation`, source: 'en' }).then(
          async (res) => ({ status: res.status, body: await res.json() }),
        ),
      ),
    );
    expect(answers.filter((answer) => answer.status !== 200).map((answer) => [answer.status, answer.body.detail])).toEqual([]);
    const billed = answers.reduce((sum, answer) => sum + answer.body.characters_billed, 0);
    const charged = answers.reduce((sum, answer) => sum + Math.round(answer.body.charged * 1e6), 0);
    const charges = (await ledgerOf(t, orgId)).filter((row) => row.kind === 'text');
    expect(charges).toHaveLength(requests);
    expect(charges.reduce((sum, row) => sum + row.quantity, 0)).toBe(billed);
    expect(-charges.reduce((sum, row) => sum + row.amount_micros, 0)).toBe(charged);
    expect(await balanceOf(t, orgId)).toBe(100_000_000 - charged);
    const account = await (await fetch(`${t.url}/v1/account`, { headers: { 'X-Api-Key': key } })).json();
    expect(account.balance).toBe((100_000_000 - charged) / 1e6);
  });
});
