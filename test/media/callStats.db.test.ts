// How a call went (DESIGN.md §12): `stats` on GET /v1/calls/{id} once ended and in call.ended, from a live
// call against the realtime stand-in (which answers at once) and a test-mode call; the latency histogram
// per direction on /metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { openEventStream, type EventStreamClient } from '../support/sse.js';
import { startRealtimeStandIn, type RealtimeStandIn } from '../support/standins/realtimeStandIn.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';
import { waitUntil } from '../support/waiting.js';
import { callApi, connect, Listener, listenUrl, sine, streamAudio, streamUrl } from './support.js';

describe(`call stats (${backendName})`, () => {
  let t: TestServer;
  let realtime: RealtimeStandIn;
  let testKey: string;
  let liveKey: string;
  let calls: ReturnType<typeof callApi>;
  let liveEvents: EventStreamClient;
  beforeAll(async () => {
    realtime = await startRealtimeStandIn({ apiKey: 'sk-stats' });
    t = await startTestServer({ OPENAI_API_KEY: 'sk-stats', OPENAI_REALTIME_URL: realtime.url });
    const orgId = await t.createOrg({ balance: 10, voice_rate_per_minute: 0.6 });
    testKey = (await t.createKey(orgId, 'test')).key;
    liveKey = (await t.createKey(orgId, 'live')).key;
    calls = callApi(t);
    liveEvents = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${liveKey}` });
  });
  afterAll(async () => {
    liveEvents?.close();
    await t?.stop();
    await realtime?.close();
  });

  const getCall = async (key: string, id: string) => (await calls.api(`/v1/calls/${id}`, key)).json();

  it('a live call: null while open; once ended, presence, interpretation, the charge and the latency of each turn', async () => {
    const call = await calls.createCall(liveKey, { agent_language: 'en', customer_language: 'es' });
    const agent = await calls.join(call.id, call.agentKey);
    const customer = await calls.join(call.id, call.customerKey);
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentMic = await connect(streamUrl(t, agent));
    // Two turns of speech with a pause between them, and silence after the second.
    const pause = Buffer.alloc(24_000 * 2);
    await streamAudio(agentMic, Buffer.concat([sine(12_000, 24_000, 440), pause, sine(12_000, 24_000, 440), pause]), 4_800, 20);
    await customerHears.waitForBytes(24_000 * 2);
    expect((await getCall(liveKey, call.id)).stats).toBeNull();
    // Both turns were answered (the room measured them) before the call ends.
    await waitUntil(() => (t.server.media.liveStats(call.id)?.latency_ms.agent.length ?? 0) >= 2, 'both turns measured');

    const ended = await (await calls.api(`/v1/calls/${call.id}/end`, liveKey, { method: 'POST' })).json();
    const event = await liveEvents.waitFor((e) => e.event === 'call.ended' && e.data.data.id === call.id);
    for (const stats of [ended.stats, event.data.data.stats]) {
      expect(stats.seconds_present.agent).toBeGreaterThan(0);
      expect(stats.seconds_present.customer).toBe(0);
      expect(stats.seconds_interpreted.agent).toBeGreaterThan(0);
      expect(stats.latency_ms.agent_to_customer).toMatchObject({ p50: expect.any(Number), p95: expect.any(Number), turns: 2 });
      expect(stats.latency_ms.agent_to_customer.p95).toBeGreaterThanOrEqual(stats.latency_ms.agent_to_customer.p50);
      expect(stats.latency_ms.customer_to_agent).toEqual({ p50: null, p95: null, turns: 0 });
      expect(stats.frames_dropped).toEqual({ agent: 0, customer: 0 });
    }
    // Once the room has closed, charged the last second and stored what it counted, GET shows it all.
    const closed = async () => (await getCall(liveKey, call.id)).stats;
    await waitUntil(async () => {
      const stats = await closed();
      return stats.amount_charged > 0 && stats.seconds_present.agent >= event.data.data.stats.seconds_present.agent;
    }, 'the charge and the room\'s counts');
    const stats = await closed();
    const charged = await t.server.app.db('ledger_entries').where({ kind: 'call', reference: call.id });
    expect(stats.amount_charged).toBeCloseTo(-charged.reduce((sum, row) => sum + row.amount_micros, 0) / 1e6, 6);
    expect(stats.latency_ms.agent_to_customer.turns).toBe(2);

    // The same latencies in the histogram of /metrics.
    const metrics = await (await fetch(`${t.url}/metrics`, { headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/media_interpretation_latency_seconds_count\{direction="agent_to_customer"\} [2-9]/);
    agentMic.close();
  });

  it('a test-mode call: presence counted, nothing interpreted, nothing charged', async () => {
    const call = await calls.createCall(testKey, { customer_language: 'fi' });
    const agent = await calls.join(call.id, call.agentKey);
    const agentMic = await connect(streamUrl(t, agent));
    const agentHears = await Listener.open(listenUrl(t, agent));
    // Half a second in real time: the side is present while its microphone is.
    await streamAudio(agentMic, sine(12_000, 24_000, 440), 960, 20);
    await agentHears.waitForBytes(24_000);
    agentMic.close();
    agentHears.close();
    await waitUntil(() => t.server.media.room(call.id) === undefined, 'the room to close');
    await calls.api(`/v1/calls/${call.id}/end`, testKey, { method: 'POST' });
    // What the room counted is stored as it closes, beside the end.
    await waitUntil(async () => (await getCall(testKey, call.id)).stats.seconds_present.agent > 0, 'the room\'s counts');
    const { stats } = await getCall(testKey, call.id);
    expect(stats.seconds_present.agent).toBeGreaterThanOrEqual(0.5);
    expect(stats).toMatchObject({ seconds_interpreted: { agent: 0, customer: 0 }, amount_charged: 0, latency_ms: { agent_to_customer: { turns: 0 } } });
  });
});
