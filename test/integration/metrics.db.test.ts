// GET /metrics: the operator's Prometheus metrics (admin token), counting requests by operation and
// status, rate-limit refusals, open streams, event delivery and committed ledger charges; the request log
// names who asked by ids.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookEntry } from '../../src/money/ledger.js';
import { backendName } from '../support/databases.js';
import { startDeepLStandIn, type DeepLStandIn } from '../support/standins/deeplStandIn.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

describe(`metrics (${backendName})`, () => {
  let t: TestServer;
  let deepl: DeepLStandIn;
  const lines: string[] = [];
  beforeAll(async () => {
    deepl = await startDeepLStandIn({ apiKey: 'deepl-metrics' });
    t = await startTestServer(
      { RATE_LIMIT_PER_MINUTE: '2', DEEPL_API_KEY: 'deepl-metrics', DEEPL_BASE_URL: deepl.url },
      { logLevel: 'info', logDestination: { write: (line: string) => lines.push(line) } },
    );
  });
  afterAll(async () => {
    await t?.stop();
    await deepl?.close();
  });

  const scrape = async () => {
    const res = await fetch(`${t.url}/metrics`, { headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.text();
  };
  /** The value of one sample line, e.g. `http_requests_total{operation="getAccount",status="200"}`. */
  const sample = (text: string, name: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.slice(name.length + 1));
  };

  it('is for the operator only', async () => {
    expect((await fetch(`${t.url}/metrics`)).status).toBe(401);
    const orgId = await t.createOrg();
    const { key } = await t.createKey(orgId, 'test');
    expect((await fetch(`${t.url}/metrics`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(401);
  });

  it('counts requests by operation and status, rate-limit refusals, open streams and delivered events', async () => {
    const orgId = await t.createOrg();
    const { key, id: keyId } = await t.createKey(orgId, 'test');
    const { key: streamKey } = await t.createKey(orgId, 'test');
    const before = await scrape();
    const account = () => fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } });
    expect([(await account()).status, (await account()).status, (await account()).status]).toEqual([200, 200, 429]);

    const stream = await fetch(`${t.url}/v1/events`, { headers: { Authorization: `Bearer ${streamKey}` } });
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes(': connected')) text += new TextDecoder().decode((await reader.read()).value);
    const created = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${streamKey}`, 'Content-Type': 'application/json' },
      body: '{"agent_language":"en"}',
    });
    expect(created.status).toBe(201);
    while (!text.includes('event: session.created')) text += new TextDecoder().decode((await reader.read()).value);

    const after = await scrape();
    const grew = (name: string) => (sample(after, name) ?? 0) - (sample(before, name) ?? 0);
    expect(grew('http_requests_total{operation="getAccount",status="200"}')).toBe(2);
    expect(grew('http_requests_total{operation="getAccount",status="429"}')).toBe(1);
    expect(grew('http_requests_total{operation="createSession",status="201"}')).toBe(1);
    expect(grew('rate_limit_refusals_total{limit="api_key"}')).toBe(1);
    expect(grew('http_request_duration_seconds_count{operation="getAccount"}')).toBe(3);
    expect(sample(after, 'event_streams_open')).toBe(1);
    expect(grew('event_delivery_lag_seconds_count')).toBe(1);
    expect(sample(after, 'media_rooms')).toBe(0);
    // The media transports' own gauges keep the names and help operators' dashboards know.
    for (const [name, help] of [
      ['media_sockets_open', 'Media WebSockets (stream, listen, signalling) open on this instance'],
      ['media_listener_chunks_dropped', 'Audio chunks dropped for slow listeners since start'],
      ['twilio_streams_open', 'Twilio media streams admitted on this instance'],
      ['media_twilio_frames_dropped', 'Frames dropped for Twilio streams since start'],
      ['audiosocket_connections_open', 'AudioSocket connections (PBX lines) open on this instance'],
      ['media_line_frames_dropped', 'Frames dropped for AudioSocket lines since start'],
    ]) {
      expect(after).toContain(`# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} 0\n`);
    }
    expect(sample(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    await reader.cancel();

    // The request log names the operation, organization and key by id; never the key itself.
    const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.operation === 'getAccount');
    expect(logged.at(-1)).toMatchObject({ org_id: orgId, credential_id: keyId, res: { statusCode: 429 } });
    expect(lines.join('\n')).not.toContain(key);
  });

  it('counts ledger charges by kind and mode once their transaction has committed, never a rolled-back one', async () => {
    const orgId = await t.createOrg({ balance: 10 });
    const { key } = await t.createKey(orgId, 'live');
    const before = await scrape();
    const translated = await fetch(`${t.url}/v1/translate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ target: 'fi', text: 'Where is my order?' }),
    });
    expect(translated.status).toBe(200);
    expect((await translated.json()).charged).toBeGreaterThan(0);

    // Call seconds: committed, and in a savepoint of a transaction that committed; then in transactions
    // that roll back, the whole or around a savepoint that itself was released.
    const db = t.server.app.db;
    const charge = { orgId, mode: 'live' as const, kind: 'call' as const, quantity: 60, amountMicros: -100_000, reference: 'call_metrics', appId: null };
    await db.transaction((trx) => bookEntry(trx, charge));
    await db.transaction((trx) => trx.transaction((savepoint) => bookEntry(savepoint, charge)));
    const rolledBack = new Error('rolled back');
    const failing = (work: Parameters<typeof db.transaction>[0]) =>
      expect(
        db.transaction(async (trx) => {
          await work(trx);
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
    await failing((trx) => bookEntry(trx, charge));
    await failing((trx) => trx.transaction((savepoint) => bookEntry(savepoint, charge)));
    expect(await db('ledger_entries').where({ org_id: orgId }).orderBy('id').select('kind')).toEqual([{ kind: 'credit' }, { kind: 'text' }, { kind: 'call' }, { kind: 'call' }]);

    const after = await scrape();
    const grew = (name: string) => (sample(after, name) ?? 0) - (sample(before, name) ?? 0);
    expect(grew('ledger_charges_total{kind="text",mode="live"}')).toBe(1);
    expect(grew('ledger_charges_total{kind="call",mode="live"}')).toBe(2);
    // Credits are not charges (the organization's balance above was one).
    expect(after).not.toContain('ledger_charges_total{kind="credit"');
  });
});
