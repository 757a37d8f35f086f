// Call transcripts end to end (DESIGN.md §12): a test-mode call and a live call (the server's own realtime
// interpreter against the stand-in) each leave a transcript, readable as JSON, WebVTT and text; events
// call.utterance and call.transcript.ready arrive in order on the stream; erasure and retention.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { storedRecords } from '../../src/app/mediaPorts.js';
import { findCallById } from '../../src/calls/calls.js';
import { announceOverdueTranscripts, TRANSCRIPT_READY_GRACE_MS } from '../../src/calls/transcripts.js';
import { runHousekeeping } from '../../src/deployment/housekeeping.js';
import { backendName } from '../support/databases.js';
import { openEventStream, type EventStreamClient } from '../support/sse.js';
import { startRealtimeStandIn, type RealtimeStandIn } from '../support/standins/realtimeStandIn.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';
import { waitUntil } from '../support/waiting.js';
import { Receiver } from '../support/webhookReceiver.js';
import { callApi, connect, Listener, listenUrl, Signal, signalUrl, sine, streamAudio, streamUrl, type SignalJoin } from './support.js';

/** `seconds` of a tone, then 600 ms of silence: one turn of speech that ends in the audio itself. */
const turn = (seconds: number, hz: number) => Buffer.concat([sine(24_000 * seconds, 24_000, hz), Buffer.alloc(24_000 * 0.6 * 2)]);

describe(`call transcripts (${backendName})`, () => {
  let t: TestServer;
  let realtime: RealtimeStandIn;
  let testKey: string;
  let liveKey: string;
  let calls: ReturnType<typeof callApi>;
  let testEvents: EventStreamClient;
  let liveEvents: EventStreamClient;
  let receiver: Receiver;
  beforeAll(async () => {
    realtime = await startRealtimeStandIn({ apiKey: 'sk-transcripts' });
    receiver = await Receiver.start();
    t = await startTestServer({ OPENAI_API_KEY: 'sk-transcripts', OPENAI_REALTIME_URL: realtime.url, WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' });
    const orgId = await t.createOrg({ balance: 10, voice_rate_per_minute: 0.6 });
    testKey = (await t.createKey(orgId, 'test')).key;
    liveKey = (await t.createKey(orgId, 'live')).key;
    calls = callApi(t);
    testEvents = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${testKey}` });
    liveEvents = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${liveKey}` });
    const endpoint = await fetch(`${t.url}/v1/webhook_endpoints`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${testKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, enabled_events: ['call.utterance', 'call.transcript.ready'] }),
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    testEvents?.close();
    liveEvents?.close();
    await t?.stop();
    await realtime?.close();
    await receiver?.close();
  });

  const transcript = (key: string, callId: string, query = '', headers: Record<string, string> = {}) =>
    fetch(`${t.url}/v1/calls/${callId}/transcript${query}`, { headers: { Authorization: `Bearer ${key}`, ...headers } });
  const eventsOf = (stream: EventStreamClient, callId: string) =>
    stream.events.filter((e) => e.data.data?.call_id === callId || e.data.data?.id === callId).map((e) => e.event);

  it('test mode: each turn of speech is a placeholder caption where live captions go, stored, and a transcript in JSON, WebVTT and text', async () => {
    const call = await calls.createCall(testKey, { agent_name: 'Alice', customer_language: 'fi', customer_name: 'Matti', metadata: { ticket: 7 } });
    const agent = (await calls.join(call.id, call.agentKey)) as SignalJoin;
    const customer = await calls.join(call.id, call.customerKey);
    const agentHears = await Listener.open(listenUrl(t, agent));
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentPage = await Signal.open(signalUrl(t, agent));
    const agentMic = await connect(streamUrl(t, agent));
    const customerMic = await connect(streamUrl(t, customer));

    await streamAudio(agentMic, turn(1, 440), 960);
    // The customer's listen socket sees what the agent said, in the customer's language; the agent's page its own words.
    const heard = await customerHears.waitForFrame((f) => f.type === 'caption');
    expect(heard).toMatchObject({ final: true, original: '[en] speech 1.0 s', translated: '[fi] speech 1.0 s', language: 'fi', source_language: 'en' });
    expect((await agentPage.next((f) => f.type === 'caption')).id).toBe(heard.id);
    // The side still hears its own voice (the seed's test mode), and no caption of its own words.
    await agentHears.waitForBytes(24_000 * 1.6 * 2);
    expect(agentHears.frames.some((f) => f.type === 'caption')).toBe(false);

    await streamAudio(customerMic, turn(0.5, 220), 1_920);
    expect(await agentHears.waitForFrame((f) => f.type === 'caption')).toMatchObject({ original: '[fi] speech 0.5 s', translated: '[en] speech 0.5 s', language: 'en' });

    await waitUntil(async () => (await t.server.app.db('call_utterances').where({ call_id: call.id })).length === 2, 'both utterances stored');
    expect((await calls.api(`/v1/calls/${call.id}/end`, testKey, { method: 'POST' })).status).toBe(200);
    const ready = await testEvents.waitFor((e) => e.event === 'call.transcript.ready' && e.data.data.call_id === call.id);
    expect(ready.data).toMatchObject({ livemode: false, metadata: { ticket: 7 }, data: { call_id: call.id, status: 'ended', utterances: 2 } });
    expect(eventsOf(testEvents, call.id).filter((type) => type.startsWith('call.utterance') || type === 'call.ended' || type === 'call.transcript.ready')).toEqual([
      'call.utterance',
      'call.utterance',
      'call.ended',
      'call.transcript.ready',
    ]);
    const said = testEvents.events.find((e) => e.event === 'call.utterance' && e.data.data.call_id === call.id)!;
    expect(said.data).toMatchObject({ livemode: false, metadata: { ticket: 7 }, data: { side: 'agent', speaker: 'Alice', text: '[en] speech 1.0 s' } });
    // The same events reach the organization's webhook endpoint.
    const delivered = () => receiver.received.map((r) => JSON.parse(r.body)).filter((e) => e.data.call_id === call.id);
    await waitUntil(() => delivered().length === 3, 'three webhook deliveries');
    expect(delivered().map((e) => e.type).sort()).toEqual(['call.transcript.ready', 'call.utterance', 'call.utterance']);
    expect(delivered().find((e) => e.type === 'call.utterance').metadata).toEqual({ ticket: 7 });

    const json = await transcript(testKey, call.id);
    expect(json.status).toBe(200);
    const body = await json.json();
    expect(body).toMatchObject({ call_id: call.id, status: 'ended', languages: { agent: 'en', customer: 'fi' } });
    expect(body.utterances.map((u: { side: string; speaker: string; language: string; text: string; translation: unknown }) => [u.side, u.speaker, u.language, u.text, u.translation])).toEqual([
      ['agent', 'Alice', 'en', '[en] speech 1.0 s', { language: 'fi', text: '[fi] speech 1.0 s' }],
      ['customer', 'Matti', 'fi', '[fi] speech 0.5 s', { language: 'en', text: '[en] speech 0.5 s' }],
    ]);
    const [first, second] = body.utterances;
    expect(Date.parse(first.ended_at) - Date.parse(first.started_at)).toBe(1_000);
    expect(second.offset_ms).toBeGreaterThan(first.offset_ms);
    expect(body.cursor).toBe(second.id);
    // Paginated: one at a time, then nothing new.
    const page = await (await transcript(testKey, call.id, '?limit=1')).json();
    expect(page.utterances.map((u: { id: number }) => u.id)).toEqual([first.id]);
    const next = await (await transcript(testKey, call.id, `?limit=1&after=${page.cursor}`)).json();
    expect(next.utterances.map((u: { id: number }) => u.id)).toEqual([second.id]);
    expect((await (await transcript(testKey, call.id, `?after=${next.cursor}`)).json())).toMatchObject({ utterances: [], cursor: next.cursor });

    const vtt = await transcript(testKey, call.id, '', { Accept: 'text/vtt' });
    expect(vtt.headers.get('content-type')).toMatch(/^text\/vtt/);
    const cues = await vtt.text();
    expect(cues).toBe(await (await transcript(testKey, call.id, '?format=vtt')).text());
    const time = (ms: number) => new Date(ms).toISOString().slice(11, 23);
    expect(cues).toBe(
      `WEBVTT\n\n1\n${time(first.offset_ms)} --> ${time(first.offset_ms + 1_000)}\n<v Alice>[en] speech 1.0 s\n[fi] speech 1.0 s\n\n` +
        `2\n${time(second.offset_ms)} --> ${time(second.offset_ms + 500)}\n<v Matti>[fi] speech 0.5 s\n[en] speech 0.5 s\n`,
    );
    // In one side's language: what the customer said, and heard.
    const inFinnish = await (await transcript(testKey, call.id, '?format=vtt&side=customer')).text();
    expect(inFinnish).toContain('<v Alice>[fi] speech 1.0 s\n');
    expect(inFinnish).toContain('<v Matti>[fi] speech 0.5 s\n');
    expect(inFinnish).not.toContain('[en]');
    const text = await transcript(testKey, call.id, '?format=txt&side=agent');
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect((await text.text()).split('\n').filter(Boolean).map((line) => line.replace(/^\[[0-9:.]+\] /, ''))).toEqual([
      'Alice (agent): [en] speech 1.0 s',
      'Matti (customer): [en] speech 0.5 s',
    ]);

    // Another mode's key sees no such call.
    expect((await transcript(liveKey, call.id)).status).toBe(404);
    for (const ws of [agentMic, customerMic] as WebSocket[]) ws.close();
    agentPage.ws.close();
  });

  it('live mode: the interpreter\'s transcriptions are the utterances, and the transcript is ready once the call ended', async () => {
    const call = await calls.createCall(liveKey, { agent_language: 'en', customer_language: 'es', metadata: { queue: 'sales' } });
    const agent = await calls.join(call.id, call.agentKey);
    const customer = await calls.join(call.id, call.customerKey);
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentMic = await connect(streamUrl(t, agent));
    await streamAudio(agentMic, sine(24_000, 24_000, 440), 4_800, 20);
    await customerHears.waitForFrame((f) => f.type === 'caption' && f.translated.includes('[es]'));

    await calls.api(`/v1/calls/${call.id}/end`, liveKey, { method: 'POST' });
    const ready = await liveEvents.waitFor((e) => e.event === 'call.transcript.ready' && e.data.data.call_id === call.id);
    expect(ready.data).toMatchObject({ livemode: true, metadata: { queue: 'sales' }, data: { status: 'ended' } });
    const body = await (await transcript(liveKey, call.id)).json();
    expect(body.utterances.length).toBe(ready.data.data.utterances);
    expect(body.utterances.length).toBeGreaterThan(0);
    for (const utterance of body.utterances) {
      expect(utterance).toMatchObject({ side: 'agent', language: 'en', text: expect.stringContaining('speech'), translation: { language: 'es', text: expect.stringContaining('[es] speech') } });
    }
    const types = eventsOf(liveEvents, call.id).filter((type) => type === 'call.utterance' || type === 'call.ended' || type === 'call.transcript.ready');
    // The turn in progress when the call ended is stored as the room closes, after call.ended; the transcript is ready after it.
    expect(types.at(-1)).toBe('call.transcript.ready');
    expect(types.filter((type) => type === 'call.transcript.ready').length).toBe(1);
    expect(types.filter((type) => type === 'call.utterance').length).toBe(body.utterances.length);
    expect((await transcript(liveKey, call.id, '?format=vtt')).status).toBe(200);
    expect(await (await transcript(liveKey, call.id, '?format=txt&side=customer')).text()).toContain('[es] speech');
    agentMic.close();
  });

  it('a call created with transcript: false keeps nothing and announces nothing', async () => {
    const res = await calls.api('/v1/calls', testKey, { method: 'POST', body: { agent_language: 'en', customer_language: 'fi', transcript: false } });
    const created = await res.json();
    const call = { id: created.id as string, agentKey: calls.keyOf(created.agent_url), customerKey: calls.keyOf(created.customer_url) };
    const agent = await calls.join(call.id, call.agentKey);
    const customer = await calls.join(call.id, call.customerKey);
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentMic = await connect(streamUrl(t, agent));
    await streamAudio(agentMic, turn(0.5, 440), 960);
    // Captions still show; nothing is kept.
    await customerHears.waitForFrame((f) => f.type === 'caption');
    await calls.api(`/v1/calls/${call.id}/end`, testKey, { method: 'POST' });
    await testEvents.waitFor((e) => e.event === 'call.ended' && e.data.data.id === call.id);
    expect((await (await transcript(testKey, call.id)).json()).utterances).toEqual([]);
    expect(await t.server.app.db('events').where({ call_id: call.id }).whereIn('type', ['call.utterance', 'call.transcript.ready'])).toEqual([]);
    agentMic.close();
  });

  describe("the organization's switch", () => {
    const setTranscripts = async (orgId: string, transcripts: boolean) => {
      const res = await fetch(`${t.url}/admin/orgs/${orgId}`, {
        method: 'PATCH',
        headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ transcripts }),
      });
      expect(res.status).toBe(200);
    };
    /** A turn of the agent's speech on the call, its caption seen by the customer (so the room has handed it over). */
    const speak = async (call: { id: string; agentKey: string; customerKey: string }, audio: Buffer, live = false) => {
      const agent = await calls.join(call.id, call.agentKey);
      const customer = await calls.join(call.id, call.customerKey);
      const customerHears = await Listener.open(listenUrl(t, customer));
      const agentMic = await connect(streamUrl(t, agent));
      await streamAudio(agentMic, audio, live ? 4_800 : 960, live ? 20 : undefined);
      await customerHears.waitForFrame((f) => f.type === 'caption' && (!live || f.translated.includes('[es]')));
      return agentMic;
    };
    const kept = async (callId: string) => ({
      utterances: (await t.server.app.db('call_utterances').where({ call_id: callId })).length,
      events: (await t.server.app.db('events').where({ call_id: callId }).whereIn('type', ['call.utterance', 'call.transcript.ready']).pluck('type')).sort(),
    });

    it('test mode: a call made while it is off keeps nothing and announces nothing, also once it is on again; only new calls keep one', async () => {
      const orgId = await t.createOrg({ transcripts: false });
      const key = (await t.createKey(orgId, 'test')).key;
      const events = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
      try {
        const quiet = await calls.createCall(key, { customer_language: 'fi' });
        const quietMic = await speak(quiet, turn(0.5, 440));
        // Switched on while the quiet call is open: it stays without a transcript; a call made now keeps one.
        await setTranscripts(orgId, true);
        const kept1 = await calls.createCall(key, { customer_language: 'fi' });
        const keptMic = await speak(kept1, turn(0.5, 330));
        await waitUntil(async () => (await kept(kept1.id)).utterances === 1, "the new call's utterance stored");
        // Off again: the call made while it was on keeps its transcript to the end.
        await setTranscripts(orgId, false);
        await streamAudio(keptMic, turn(0.5, 330), 960);
        await waitUntil(async () => (await kept(kept1.id)).utterances === 2, "the open call's second utterance stored");
        await streamAudio(quietMic, turn(0.5, 440), 960);
        for (const call of [quiet, kept1]) expect((await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST' })).status).toBe(200);
        const ready = await events.waitFor((e) => e.event === 'call.transcript.ready' && e.data.data.call_id === kept1.id);
        expect(ready.data.data.utterances).toBe(2);
        await events.waitFor((e) => e.event === 'call.ended' && e.data.data.id === quiet.id);

        expect(await kept(quiet.id)).toEqual({ utterances: 0, events: [] });
        expect(events.events.filter((e) => e.data.data?.call_id === quiet.id).map((e) => e.event)).toEqual([]);
        expect(await (await transcript(key, quiet.id)).json()).toMatchObject({ call_id: quiet.id, status: 'ended', utterances: [] });
        expect(await (await transcript(key, quiet.id, '?format=vtt')).text()).toBe('WEBVTT\n');
        expect(await kept(kept1.id)).toEqual({ utterances: 2, events: ['call.transcript.ready', 'call.utterance', 'call.utterance'] });
        for (const mic of [quietMic, keptMic]) mic.close();
      } finally {
        events.close();
      }
    });

    it('live mode: a call made while it is off keeps no utterance of the interpreter and sends no call.utterance', async () => {
      const orgId = await t.createOrg({ balance: 10, voice_rate_per_minute: 0.6, transcripts: false });
      const key = (await t.createKey(orgId, 'live')).key;
      const call = await calls.createCall(key, { agent_language: 'en', customer_language: 'es' });
      const mic = await speak(call, sine(24_000, 24_000, 440), true);
      expect((await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST' })).status).toBe(200);
      await waitUntil(async () => (await t.server.app.db('events').where({ call_id: call.id, type: 'call.ended' })).length === 1, 'call.ended stored');
      // Whatever the room still had is handed over as it closes: its stats are the last of it.
      await waitUntil(async () => (await t.server.app.db('calls').where({ id: call.id }).first()).media_stats !== null, "the room's stats stored");
      expect(await kept(call.id)).toEqual({ utterances: 0, events: [] });
      expect((await (await transcript(key, call.id)).json()).utterances).toEqual([]);
      mic.close();
    });
  });

  /** A test-mode call whose agent said `turns` turns, all stored, and whose room has closed since (the call is open). */
  async function callThatSpoke(turns: number) {
    const call = await calls.createCall(testKey, { customer_language: 'fi' });
    const agent = await calls.join(call.id, call.agentKey);
    await calls.join(call.id, call.customerKey);
    const agentMic = await connect(streamUrl(t, agent));
    await streamAudio(agentMic, Buffer.concat(Array.from({ length: turns }, () => turn(0.5, 440))), 960);
    await waitUntil(async () => (await t.server.app.db('call_utterances').where({ call_id: call.id })).length === turns, `${turns} utterances stored`);
    agentMic.close();
    await waitUntil(() => t.server.media.room(call.id) === undefined, 'the room closed');
    return call;
  }

  it("utterances of any calls completed together are stored in one statement, each call's in order, each with its event and its own webhooks", async () => {
    const otherOrg = await t.createOrg();
    const otherKey = (await t.createKey(otherOrg, 'test')).key;
    // A test-mode call of the organization with a webhook endpoint (test mode), a live one of the same organization, a test-mode one of another.
    const created = [await calls.createCall(testKey, { customer_language: 'fi' }), await calls.createCall(liveKey, { customer_language: 'fi' }), await calls.createCall(otherKey, { customer_language: 'fi' })];
    const rows = await Promise.all(created.map(async (call) => (await findCallById(t.server.app.db, call.id))!));
    const records = storedRecords(t.server.app);
    const inserts: string[] = [];
    const counting = (query: { sql: string }) => void (query.sql.includes('INSERT INTO call_utterances') && inserts.push(query.sql));
    t.server.app.db.on('query', counting);
    const said = ['one', 'two', 'three', 'four', 'five', 'six', 'seven'];
    const callOf = (i: number) => i % rows.length;
    const now = Date.now();
    try {
      await Promise.all(
        said.map((text, i) =>
          records.utterance(rows[callOf(i)]!, { speaker: i % 2 ? 'customer' : 'agent', language: 'en', text, translation: { language: 'fi', text: `[fi] ${text}` }, startedAt: now + i, endedAt: now + i + 1 }),
        ),
      );
    } finally {
      t.server.app.db.off('query', counting);
    }
    // Gathered together (the gathering time; what comes while a statement is in flight: test/unit/keyedBatches.test.ts).
    expect(inserts).toHaveLength(1);
    const db = t.server.app.db;
    for (const [c, row] of rows.entries()) {
      const mine = said.filter((_, i) => callOf(i) === c);
      const stored = await db('call_utterances').where({ call_id: row.id }).orderBy('id');
      expect(stored.map((u) => [u.text, u.org_id, u.mode, u.translation_text, u.offset_ms >= 0])).toEqual(mine.map((text) => [text, row.org_id, row.mode, `[fi] ${text}`, true]));
      const logged = await db('events').where({ call_id: row.id, type: 'call.utterance' }).orderBy('seq');
      expect(logged.map((e) => [e.org_id, e.mode, e.payload.livemode, e.payload.data.id, e.payload.data.text])).toEqual(
        stored.map((u) => [row.org_id, row.mode, row.mode === 'live', Number(u.id), u.text]),
      );
      // Only the test-mode endpoint of the first organization wants them.
      const deliveries = await db('webhook_deliveries').whereIn('event_id', logged.map((e) => e.id));
      expect(deliveries.length).toBe(c === 0 ? logged.length : 0);
    }
    const streamed = () => testEvents.events.filter((e) => e.event === 'call.utterance' && e.data.data.call_id === rows[0]!.id).map((e) => e.data.data.id);
    const first = await db('call_utterances').where({ call_id: rows[0]!.id }).orderBy('id');
    await waitUntil(() => streamed().length === first.length, 'the first call\'s utterances on the event stream');
    expect(streamed()).toEqual(first.map((u) => Number(u.id)));
  });

  it('a call ended with no room open anywhere: call.transcript.ready at once, once, counting its utterances', async () => {
    const db = t.server.app.db;
    const call = await callThatSpoke(2);
    expect((await calls.api(`/v1/calls/${call.id}/end`, testKey, { method: 'POST' })).status).toBe(200);
    const ready = await testEvents.waitFor((e) => e.event === 'call.transcript.ready' && e.data.data.call_id === call.id);
    expect(ready.data.data).toEqual({ call_id: call.id, status: 'ended', utterances: 2 });
    expect(await db('events').where({ call_id: call.id, type: 'call.transcript.ready' })).toHaveLength(1);
  });

  it('housekeeping says a transcript is ready when no instance did (its room\'s instance died), once, however often and concurrently it runs', async () => {
    const db = t.server.app.db;
    const call = await callThatSpoke(1);
    // Ended by an instance that died before a word reached the others: the row says ended, nobody said more.
    await db('calls').where({ id: call.id }).update({ status: 'ended', ended_at: db.fn.now() });
    const readyEvents = () => db('events').where({ call_id: call.id, type: 'call.transcript.ready' });
    const at = (ms: number) => ({ ...t.server.app, now: () => ms });
    const housekeeping = async (ms: number) => {
      await db('job_runs').del();
      return runHousekeeping(at(ms));
    };
    // Within the grace period the room's instance may still say it.
    expect(await housekeeping(Date.now())).toBe(true);
    expect(await readyEvents()).toEqual([]);
    const later = Date.now() + TRANSCRIPT_READY_GRACE_MS + 60_000;
    const passes = await Promise.all([announceOverdueTranscripts(t.server.app, 0, later), announceOverdueTranscripts(t.server.app, 0, later), housekeeping(later)]);
    expect(await housekeeping(later)).toBe(true);
    expect(passes[0] + passes[1]).toBeLessThanOrEqual(1);
    const stored = await readyEvents();
    expect(stored).toHaveLength(1);
    expect(stored[0].payload).toMatchObject({ type: 'call.transcript.ready', livemode: false, data: { call_id: call.id, status: 'ended', utterances: 1 } });
    await testEvents.waitFor((e) => e.event === 'call.transcript.ready' && e.data.data.call_id === call.id);
    // Long past the periods housekeeping looks back over, a call is left alone.
    const old = await calls.createCall(testKey, { customer_language: 'fi' });
    await db('calls').where({ id: old.id }).update({ status: 'ended', ended_at: db.raw(`now() - interval '3 days'`) });
    expect(await housekeeping(later)).toBe(true);
    expect(await db('events').where({ call_id: old.id, type: 'call.transcript.ready' })).toEqual([]);
  });

  it('DELETE erases a transcript and the events that carried it; housekeeping erases what outlived retention_days', async () => {
    const db = t.server.app.db;
    const spoken = async (body: Record<string, unknown>) => {
      const call = await calls.createCall(testKey, { customer_language: 'fi', ...body });
      const agent = await calls.join(call.id, call.agentKey);
      await calls.join(call.id, call.customerKey);
      const agentMic = await connect(streamUrl(t, agent));
      await streamAudio(agentMic, turn(0.5, 440), 960);
      await waitUntil(async () => (await db('call_utterances').where({ call_id: call.id })).length === 1, 'an utterance stored');
      agentMic.close();
      return call.id;
    };
    const erased = await spoken({});
    expect((await db('events').where({ call_id: erased, type: 'call.utterance' })).length).toBe(1);
    expect((await fetch(`${t.url}/v1/calls/${erased}/transcript`, { method: 'DELETE', headers: { Authorization: `Bearer ${liveKey}` } })).status).toBe(404);
    expect((await fetch(`${t.url}/v1/calls/${erased}/transcript`, { method: 'DELETE', headers: { Authorization: `Bearer ${testKey}` } })).status).toBe(204);
    expect((await (await transcript(testKey, erased)).json()).utterances).toEqual([]);
    expect(await db('events').where({ call_id: erased, type: 'call.utterance' })).toEqual([]);
    expect((await calls.api(`/v1/calls/${erased}`, testKey)).status).toBe(200);

    const kept = await spoken({ retention_days: 1 });
    const forever = await spoken({});
    // Two days pass for both: only the call with a retention loses its words.
    for (const callId of [kept, forever]) await db('call_utterances').where({ call_id: callId }).update({ created_at: db.raw(`now() - interval '2 days'`) });
    await db('job_runs').del();
    expect(await runHousekeeping(t.server.app)).toBe(true);
    expect(await db('call_utterances').where({ call_id: kept })).toEqual([]);
    expect(await db('events').where({ call_id: kept, type: 'call.utterance' })).toEqual([]);
    expect((await db('call_utterances').where({ call_id: forever })).length).toBe(1);
    expect((await db('events').where({ call_id: forever, type: 'call.utterance' })).length).toBe(1);
  });

  it('refuses bad parameters with 422', async () => {
    const call = await calls.createCall(testKey, { customer_language: 'fi' });
    expect((await transcript(testKey, call.id, '?format=pdf')).status).toBe(422);
    expect((await transcript(testKey, call.id, '?side=nobody')).status).toBe(422);
    expect((await transcript(testKey, call.id, '?limit=201')).status).toBe(422);
    const res = await calls.api('/v1/calls', testKey, { method: 'POST', body: { agent_language: 'en', retention_days: 0, transcript: 'yes' } });
    expect(res.status).toBe(422);
    expect((await res.json()).detail.map((d: { loc: string[] }) => d.loc.join('.')).sort()).toEqual(['body.retention_days', 'body.transcript']);
  });
});
