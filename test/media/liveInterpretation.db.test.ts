// A live call end to end: the server's own OpenAI realtime interpreter (configured from the environment,
// nothing injected) against the realtime stand-in; each side hears the other interpreted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { backendName } from '../support/databases.js';
import { negatePcm16, startRealtimeStandIn, type RealtimeStandIn } from '../support/standins/realtimeStandIn.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { callApi, connect, Listener, listenUrl, sine, streamAudio, streamUrl } from './support.js';
import { waitUntil } from '../support/waiting.js';

describe(`a live call interpreted through the realtime API (${backendName})`, () => {
  let t: TestServer;
  let realtime: RealtimeStandIn;
  let key: string;
  let orgId: string;
  beforeAll(async () => {
    realtime = await startRealtimeStandIn({ apiKey: 'sk-live-call' });
    t = await startTestServer({ OPENAI_API_KEY: 'sk-live-call', OPENAI_REALTIME_URL: realtime.url });
    orgId = await t.createOrg({ balance: 10, voice_rate_per_minute: 0.6 });
    key = (await t.createKey(orgId, 'live')).key;
  });
  afterAll(async () => {
    await t?.stop();
    await realtime?.close();
  });

  it('each side hears the other interpreted, with captions and provenance, and the call is billed', async () => {
    const calls = callApi(t);
    const call = await calls.createCall(key, { agent_language: 'en', customer_language: 'es' });
    const agent = await calls.join(call.id, call.agentKey);
    const customer = await calls.join(call.id, call.customerKey);
    const agentHears = await Listener.open(listenUrl(t, agent));
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentMic = await connect(streamUrl(t, agent));
    const customerMic = await connect(streamUrl(t, customer));

    const agentVoice = sine(24_000, 24_000, 440); // one second
    const customerVoice = sine(24_000, 24_000, 220);
    await streamAudio(agentMic, agentVoice, 4_800);
    await streamAudio(customerMic, customerVoice, 4_800);

    // The stand-in "interprets" by negating the samples: what each side hears is the other's voice so.
    const customerGot = await customerHears.waitForBytes(agentVoice.length);
    const agentGot = await agentHears.waitForBytes(customerVoice.length);
    expect(customerGot.subarray(0, agentVoice.length).equals(negatePcm16(agentVoice))).toBe(true);
    expect(agentGot.subarray(0, customerVoice.length).equals(negatePcm16(customerVoice))).toBe(true);

    const provenance = await customerHears.waitForFrame((f) => f.type === 'provenance' && f.engine === 'openai');
    expect(provenance.model).toBe('gpt-realtime-translate');
    const caption = await customerHears.waitForFrame((f) => f.type === 'caption' && f.translated);
    expect(caption.translated).toContain('[es]');

    // The translation endpoint was asked for the right output languages.
    const targets = realtime.connections.map((c) => JSON.stringify(c.received.find((e) => e.type === 'session.update')));
    expect(targets.some((update) => update.includes('"es"'))).toBe(true);
    expect(targets.some((update) => update.includes('"en"'))).toBe(true);

    await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST' });
    await customerHears.closed;
    await waitUntil(async () => (await t.server.app.db('ledger_entries').where({ org_id: orgId, kind: 'call' })).length > 0, 'a call charge');
    const charges = await t.server.app.db('ledger_entries').where({ org_id: orgId, kind: 'call' });
    const seconds = charges.reduce((sum, row) => sum + row.quantity, 0);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(charges.reduce((sum, row) => sum + row.amount_micros, 0)).toBe(-seconds * 10_000);
    for (const ws of [agentMic, customerMic] as WebSocket[]) ws.close();
  });
});
