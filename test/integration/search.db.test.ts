// GET /v1/search (DESIGN.md §12): full-text search over call transcripts and chat messages of the key's
// organization and mode, newest first, snippets with the match marked, each kind only with its scope,
// cursor pagination; the same SQL on PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRow } from '../../src/calls/calls.js';
import { storeUtterances } from '../../src/calls/transcripts.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { waitUntil } from '../support/waiting.js';
import { callApi, connect, sine, streamAudio, streamUrl } from '../media/support.js';

describe(`search (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let calls: ReturnType<typeof callApi>;
  let orgId: string;
  beforeAll(async () => {
    t = await startTestServer();
    orgId = await t.createOrg();
    key = (await t.createKey(orgId, 'test')).key;
    calls = callApi(t);
  });
  afterAll(() => t?.stop());

  const find = async (query: string, as = key) => {
    const res = await fetch(`${t.url}/v1/search?${query}`, { headers: { Authorization: `Bearer ${as}` } });
    return { status: res.status, body: await res.json() };
  };
  const post = async (path: string, body: unknown, as = key) => {
    const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${as}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBeLessThan(300);
    return res.json();
  };
  /** An utterance as the media plane hands it over, stored by the transcript's own code. */
  async function said(callId: string, speaker: 'agent' | 'customer', text: string, heard: string) {
    const call = (await t.server.app.db<CallRow>('calls').where({ id: callId }).first())!;
    const now = Date.now();
    await storeUtterances(t.server.app, [{ call, utterance: { speaker, language: speaker === 'agent' ? 'en' : 'fi', text, translation: { language: speaker === 'agent' ? 'fi' : 'en', text: heard }, startedAt: now - 1_000, endedAt: now } }]);
  }

  it('finds words in transcripts and chats, newest first, with the match marked; kind narrows; pages follow each other', async () => {
    const session = await post('/v1/sessions', { agent_language: 'en', customer_language: 'fi' });
    const early = await post(`/v1/sessions/${session.id}/messages`, { sender: 'customer', text: 'Haluan hyvityksen, tilaukseni on myöhässä', language: 'fi' });
    const call = await calls.createCall(key, { customer_language: 'fi' });
    await said(call.id, 'customer', 'Tilaukseni ei tullut', 'My order did not arrive');
    await said(call.id, 'agent', 'I will refund the order today', 'Hyvitän tilauksen tänään');
    const late = await post(`/v1/sessions/${session.id}/messages`, { sender: 'agent', text: 'The refund is on its way' });

    const refund = await find('q=refund');
    expect(refund.status).toBe(200);
    expect(refund.body.hits.map((hit: { kind: string; id: string }) => [hit.kind, hit.id])).toEqual([
      ['session', session.id],
      ['call', call.id],
    ]);
    expect(refund.body.hits[0]).toMatchObject({ message_id: late.id, snippet: 'The <mark>refund</mark> is on its way' });
    expect(refund.body.hits[1].snippet).toBe('I will <mark>refund</mark> the order today / Hyvitän tilauksen tänään');
    expect(refund.body.next).toBeNull();
    // Every language matches its own words, in what was said and in what was heard.
    const finnish = await find('q=tilaukseni');
    expect(finnish.body.hits.map((hit: { kind: string; message_id?: number }) => hit.kind)).toEqual(['call', 'session']);
    expect(finnish.body.hits[1].message_id).toBe(early.id);
    expect((await find('q=arrive')).body.hits.map((hit: { snippet: string }) => hit.snippet)).toEqual(['Tilaukseni ei tullut / My order did not <mark>arrive</mark>']);
    // Web search syntax: two words, a phrase, an exclusion.
    expect((await find(`q=${encodeURIComponent('refund order')}`)).body.hits.map((hit: { kind: string }) => hit.kind)).toEqual(['call']);
    expect((await find(`q=${encodeURIComponent('"refund is"')}`)).body.hits.map((hit: { kind: string }) => hit.kind)).toEqual(['session']);
    expect((await find(`q=${encodeURIComponent('refund -today')}`)).body.hits.map((hit: { kind: string }) => hit.kind)).toEqual(['session']);
    // Narrowed to one kind.
    expect((await find('q=refund&kind=call')).body.hits.map((hit: { id: string }) => hit.id)).toEqual([call.id]);
    // One hit a page: the cursor leads through all of them once.
    const first = await find('q=refund&limit=1');
    expect(first.body.hits.map((hit: { kind: string }) => hit.kind)).toEqual(['session']);
    const second = await find(`q=refund&limit=1&after=${first.body.next}`);
    expect(second.body.hits.map((hit: { kind: string }) => hit.kind)).toEqual(['call']);
    const third = await find(`q=refund&limit=1&after=${second.body.next}`);
    expect(third.body).toEqual({ hits: [], next: null });
  });

  it('finds what a test-mode call said, stored as it happened', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const agentMic = await connect(streamUrl(t, await calls.join(call.id, call.agentKey)));
    await streamAudio(agentMic, Buffer.concat([sine(24_000, 24_000, 440), Buffer.alloc(28_800)]), 4_800);
    await waitUntil(async () => (await find('q=speech&kind=call')).body.hits.some((hit: { id: string }) => hit.id === call.id), 'the utterance found');
    const hit = (await find('q=speech&kind=call')).body.hits.find((h: { id: string }) => h.id === call.id);
    expect(hit.snippet).toBe('[en] <mark>speech</mark> 1.0 s / [fi] <mark>speech</mark> 1.0 s');
    agentMic.close();
  });

  it('shows only the organization and mode of the key, each kind only with its scope', async () => {
    const session = await post('/v1/sessions', { agent_language: 'en' });
    await post(`/v1/sessions/${session.id}/messages`, { sender: 'customer', text: 'zebra crossing' });
    const call = await calls.createCall(key, { customer_language: 'fi' });
    await said(call.id, 'agent', 'a zebra crossed', '[fi] a zebra crossed');
    // Another organization and the other mode see nothing of it.
    const otherOrg = (await t.createKey(await t.createOrg(), 'test')).key;
    expect((await find('q=zebra', otherOrg)).body.hits).toEqual([]);
    expect((await find('q=zebra', (await t.createKey(orgId, 'live')).key)).body.hits).toEqual([]);
    // A key that reads sessions only finds chats; asking for calls is refused.
    const chatsOnly = (await t.createKey(orgId, 'test', ['sessions:read'])).key;
    expect((await find('q=zebra', chatsOnly)).body.hits.map((hit: { kind: string }) => hit.kind)).toEqual(['session']);
    expect(await find('q=zebra&kind=call', chatsOnly)).toEqual({ status: 403, body: { detail: 'missing scope: calls:read' } });
    const callsOnly = (await t.createKey(orgId, 'test', ['calls:read'])).key;
    expect((await find('q=zebra', callsOnly)).body.hits.map((hit: { kind: string }) => hit.kind)).toEqual(['call']);
    expect(await find('q=zebra', (await t.createKey(orgId, 'test', ['translate'])).key)).toEqual({ status: 403, body: { detail: 'missing scope: calls:read or sessions:read' } });
  });

  it('pages a word in a thousand rows newest first, only the organization\'s, like a rare one', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const elsewhere = await calls.createCall((await t.createKey(await t.createOrg(), 'test')).key, { customer_language: 'fi' });
    // A thousand matches, with times out of insertion order, and as many in another organization: the search walks
    // the newest rows rather than sorting every match, and must still keep to the organization and the order.
    const start = Date.now() - 3_600_000;
    const rows = async (callId: string) => {
      const owner = await t.server.app.db('calls').where({ id: callId }).first('org_id', 'mode');
      return Array.from({ length: 1_030 }, (_, i) => {
        const at = new Date(start + ((i * 7919) % 1_030) * 1_000);
        return { ...owner, call_id: callId, side: 'agent', speaker: 'agent', language: 'en', text: `plentiful word ${i}`, translation_language: 'fi', translation_text: `sana ${i}`, started_at: at, ended_at: at, offset_ms: 0, created_at: at };
      });
    };
    await t.server.app.db('call_utterances').insert(await rows(elsewhere.id));
    const mine = await t.server.app.db('call_utterances').insert(await rows(call.id)).returning(['id', 'created_at']);
    const newestFirst = [...mine].sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || Number(b.id) - Number(a.id)).map((row) => Number(row.id));

    const seen: number[] = [];
    let after = '';
    for (let page = 0; page < 6; page++) {
      const res = await find(`q=plentiful&kind=call&limit=100${after}`);
      expect(res.status).toBe(200);
      expect(res.body.hits.every((hit: { id: string }) => hit.id === call.id)).toBe(true);
      seen.push(...res.body.hits.map((hit: { utterance_id: number }) => hit.utterance_id));
      after = `&after=${res.body.next}`;
    }
    expect(seen).toEqual(newestFirst.slice(0, 600));
    // A rarer word of the same rows (fewer matches than the limit): the same order.
    const rare = await find('q=plentiful+17&kind=call');
    expect(rare.body.hits.map((hit: { utterance_id: number }) => hit.utterance_id)).toEqual([Number(mine[17]!.id)]);
  });

  it('refuses what is not a search with 422', async () => {
    expect((await find('')).status).toBe(422);
    expect((await find(`q=${'x'.repeat(201)}`)).status).toBe(422);
    expect((await find('q=a&kind=fax')).status).toBe(422);
    expect((await find('q=a&limit=0')).status).toBe(422);
    expect(await find('q=a&after=bm9wZQ')).toMatchObject({ status: 422, body: { detail: [{ loc: ['query', 'after'], type: 'invalid_cursor' }] } });
    // Whatever the words, the search itself never fails.
    const odd = await find(`q=${encodeURIComponent('" - or ( ) & | ! : * \\')}`);
    expect(odd.status, JSON.stringify(odd.body)).toBe(200);
  });
});
