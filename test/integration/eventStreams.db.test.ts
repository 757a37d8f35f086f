// Event streams as held connections: HEAD answers at once, each holder has a limit, revoking an API key
// ends every stream opened with it, and the bytes on the wire are a well-formed HTTP/1.1 or HTTP/1.0 body.
// A resumed stream shows an event once, whether its backlog or the bus brings it first.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRevocationBus } from '../../src/auth/revocation.js';
import { closeSession } from '../../src/sessions/sessions.js';
import { backendName } from '../support/databases.js';
import { openEventStream, type EventStreamClient } from '../support/sse.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';
import { waitUntil } from '../support/waiting.js';

describe(`event streams as held connections (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  let key: string;
  let keyId: string;
  beforeAll(async () => {
    t = await startTestServer({ EVENT_STREAMS_PER_KEY: '2', CHAT_STREAMS_PER_SESSION: '1' });
    orgId = await t.createOrg({ name: 'Streaming Org' });
    ({ key, id: keyId } = await t.createKey(orgId, 'test'));
  });
  afterAll(() => t?.stop());

  const bearer = (apiKey: string) => ({ Authorization: `Bearer ${apiKey}` });
  const post = (path: string, apiKey: string, body: unknown) =>
    fetch(`${t.url}${path}`, { method: 'POST', headers: { ...bearer(apiKey), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  async function createSession(apiKey = key) {
    const session = await (await post('/v1/sessions', apiKey, { agent_language: 'en' })).json();
    return { id: session.id as string, chatKey: session.customer_url.split('#k=')[1] as string };
  }
  const streamsOf = (holder: string) => t.server.app.eventStreams.count(holder);
  const closeAll = async (...streams: EventStreamClient[]) => {
    for (const stream of streams) stream.close();
    await waitUntil(() => t.server.app.eventStreams.count() === 0, 'the streams to close');
    // A stream leaves its group as it lets go of its slot: no group outlives its streams.
    expect(t.server.app.liveStreams.size()).toBe(0);
  };

  it('replays an event once to a stream resumed while the event is stored but not yet published (its request still being answered)', async () => {
    const { id: sessionId } = await createSession();
    const { app } = t.server;
    const before = await app.db('events').where({ org_id: orgId }).orderBy('seq', 'desc').first('id');
    // As a request that closed the session would: stored and committed, published once its answer is out.
    const hold = app.events.hold();
    await closeSession({ db: app.db, events: hold.events, actingApp: null, config: app.config }, { orgId, mode: 'test' }, sessionId);
    const closed = await app.db('events').where({ session_id: sessionId, type: 'session.closed' }).first('id');
    const resumed = await openEventStream(`${t.url}/v1/events`, { ...bearer(key), 'Last-Event-ID': before.id });
    try {
      await resumed.waitFor((e) => e.id === closed.id);
      hold.release();
      // What comes after the release arrives after the released event would have.
      const { id: next } = await createSession();
      await resumed.waitFor((e) => e.event === 'session.created' && e.data.data.id === next);
      expect(resumed.events.map((e) => e.id)).toEqual([closed.id, expect.any(String)]);
    } finally {
      hold.release();
      await closeAll(resumed);
    }
  });

  it('answers HEAD on every event stream at once with what a GET would get, without opening a stream', async () => {
    const { id, chatKey } = await createSession();
    const head = (path: string, headers: Record<string, string> = {}) => fetch(`${t.url}${path}`, { method: 'HEAD', headers });
    for (const [path, headers] of [
      ['/v1/events', bearer(key)],
      [`/v1/sessions/${id}/stream`, bearer(key)],
      [`/chat/public/${id}/stream`, { 'X-Chat-Key': chatKey }],
    ] as const) {
      const res = await head(path, headers);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(res.headers.get('x-accel-buffering')).toBe('no');
      expect(await res.text()).toBe('');
    }
    expect((await head('/v1/events')).status).toBe(401);
    expect((await head(`/v1/sessions/${id}/stream`, { Authorization: 'Bearer spk_test_unknown0000000000000000000000' })).status).toBe(401);
    expect((await head('/v1/sessions/ses_nope/stream', bearer(key))).status).toBe(404);
    expect((await head(`/chat/public/${id}/stream`, { 'X-Chat-Key': 'chk_wrong' })).status).toBe(401);
    const noEvents = (await t.createKey(orgId, 'test', ['sessions:read'])).key;
    expect((await head('/v1/events', bearer(noEvents))).status).toBe(403);
    expect(t.server.app.eventStreams.count()).toBe(0);
  });

  it('refuses an API key a stream beyond its limit with 429 and Retry-After; a closed one frees its place', async () => {
    const { id } = await createSession();
    const first = await openEventStream(`${t.url}/v1/events`, bearer(key));
    const second = await openEventStream(`${t.url}/v1/sessions/${id}/stream`, bearer(key));
    expect([first.status, second.status]).toEqual([200, 200]);

    const third = await fetch(`${t.url}/v1/events`, { headers: bearer(key) });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('30');
    expect(await third.json()).toEqual({
      detail: 'too many open event streams for this API key (at most 2); close one before opening another',
    });
    // HEAD learns the same.
    expect((await fetch(`${t.url}/v1/events`, { method: 'HEAD', headers: bearer(key) })).status).toBe(429);
    // Another key of the organization has its own streams.
    const other = await openEventStream(`${t.url}/v1/events`, bearer((await t.createKey(orgId, 'test')).key));
    expect(other.status).toBe(200);

    first.close();
    await waitUntil(() => streamsOf(`credential:${keyId}`) === 1, 'the closed stream to be let go');
    const again = await openEventStream(`${t.url}/v1/events`, bearer(key));
    expect(again.status).toBe(200);
    await closeAll(second, other, again);
  });

  it("refuses a chat session's customer a stream beyond its limit", async () => {
    const { id, chatKey } = await createSession();
    const url = `${t.url}/chat/public/${id}/stream`;
    const open = await openEventStream(url, { 'X-Chat-Key': chatKey });
    expect(open.status).toBe(200);
    const refused = await fetch(url, { headers: { 'X-Chat-Key': chatKey } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect((await refused.json()).detail).toBe('too many open event streams for this chat session (at most 1); close one before opening another');
    // Another session's customer is not affected.
    const elsewhere = await createSession();
    const otherStream = await openEventStream(`${t.url}/chat/public/${elsewhere.id}/stream`, { 'X-Chat-Key': elsewhere.chatKey });
    expect(otherStream.status).toBe(200);
    await closeAll(open, otherStream);
  });

  it("ends every stream of a revoked key at once, and only that key's", async () => {
    const doomed = await t.createKey(orgId, 'test');
    const kept = await t.createKey(orgId, 'test');
    const { id } = await createSession(kept.key);
    const doomedOrg = await openEventStream(`${t.url}/v1/events`, bearer(doomed.key));
    const doomedSession = await openEventStream(`${t.url}/v1/sessions/${id}/stream`, bearer(doomed.key));
    const keptOrg = await openEventStream(`${t.url}/v1/events`, bearer(kept.key));
    expect([doomedOrg.status, doomedSession.status, keptOrg.status]).toEqual([200, 200, 200]);
    // Streams deliver before the revocation.
    await post(`/v1/sessions/${id}/messages`, kept.key, { sender: 'agent', text: 'before' });
    for (const stream of [doomedOrg, doomedSession, keptOrg]) await stream.waitFor((event) => event.data.data?.text === 'before');
    // Both keys' organization streams show the same events the same way: one group (the session's stream is on its own).
    expect(t.server.app.liveStreams.size()).toBe(1);

    const revoked = await fetch(`${t.url}/admin/keys/${doomed.id}`, { method: 'DELETE', headers: bearer(TEST_ADMIN_TOKEN) });
    expect(revoked.status).toBe(204);
    await doomedOrg.ended;
    await doomedSession.ended;
    const delivered = [doomedOrg.events.length, doomedSession.events.length];

    // Nothing more reaches them; the other key's stream goes on.
    await post(`/v1/sessions/${id}/messages`, kept.key, { sender: 'agent', text: 'after' });
    await keptOrg.waitFor((event) => event.data.data?.text === 'after');
    expect([doomedOrg.events.length, doomedSession.events.length]).toEqual(delivered);
    expect((await fetch(`${t.url}/v1/events`, { headers: bearer(doomed.key) })).status).toBe(401);
    expect(streamsOf(`credential:${doomed.id}`)).toBe(0);
    // Only the kept stream still watches for a revocation.
    expect((t.server.app.revocations as LocalRevocationBus).watcherCount()).toBe(1);
    await closeAll(keptOrg);
  });

  /** A stream read off a raw socket: what the server sent, byte for byte. */
  function rawStream(version: '1.0' | '1.1', apiKey: string) {
    const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1');
    let received = Buffer.alloc(0);
    socket.on('data', (bytes) => (received = Buffer.concat([received, bytes])));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`GET /v1/events HTTP/${version}\r\nHost: test\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
    const split = () => {
      const at = received.indexOf('\r\n\r\n');
      return at === -1 ? null : { head: received.subarray(0, at).toString('latin1'), body: received.subarray(at + 4) };
    };
    return { socket, closed, split };
  }

  /** A chunked body's data, and whether its last chunk came; throws on anything that is not a chunk. */
  function dechunk(body: Buffer): { data: string; complete: boolean; after: number } {
    const parts: Buffer[] = [];
    for (let at = 0; ; ) {
      const lineEnd = body.indexOf('\r\n', at);
      if (lineEnd === -1) return { data: Buffer.concat(parts).toString(), complete: false, after: 0 };
      const size = body.subarray(at, lineEnd).toString('latin1');
      if (!/^[0-9a-f]+$/.test(size)) throw new Error(`not a chunk size: ${JSON.stringify(size)}`);
      const length = parseInt(size, 16);
      const end = lineEnd + 2 + length;
      if (body.length < end + 2) return { data: Buffer.concat(parts).toString(), complete: false, after: 0 };
      if (body.subarray(end, end + 2).toString('latin1') !== '\r\n') throw new Error('a chunk does not end with CRLF');
      if (length === 0) return { data: Buffer.concat(parts).toString(), complete: true, after: body.length - end - 2 };
      parts.push(body.subarray(lineEnd + 2, end));
      at = end + 2;
    }
  }

  it('writes a stream over HTTP/1.1 as a chunked body that ends with its last chunk, and over HTTP/1.0 as the body until the connection closes', async () => {
    const writer = await t.createKey(orgId, 'test');
    const { id } = await createSession(writer.key);
    const readers = [await t.createKey(orgId, 'test'), await t.createKey(orgId, 'test')];
    const [chunked, plain] = [rawStream('1.1', readers[0]!.key), rawStream('1.0', readers[1]!.key)];
    const chunkedData = () => dechunk(chunked.split()?.body ?? Buffer.alloc(0)).data;
    const plainData = () => plain.split()?.body.toString() ?? '';
    await waitUntil(() => chunkedData().includes(': connected') && plainData().includes(': connected'), 'both streams to connect');
    // Several events, some in one write, and a text with characters of more than one byte.
    for (const text of ['first', 'zweite Nachricht: Größe', 'third']) await post(`/v1/sessions/${id}/messages`, writer.key, { sender: 'agent', text });
    await waitUntil(() => [chunkedData(), plainData()].every((data) => data.includes('"third"')), 'the events');

    for (const reader of readers) expect((await fetch(`${t.url}/admin/keys/${reader.id}`, { method: 'DELETE', headers: bearer(TEST_ADMIN_TOKEN) })).status).toBe(204);
    await waitUntil(() => dechunk(chunked.split()!.body).complete, 'the last chunk');
    await plain.closed;

    const chunkedHead = chunked.split()!.head;
    expect(chunkedHead).toMatch(/^HTTP\/1\.1 200 /);
    expect(chunkedHead).toMatch(/\r\ntransfer-encoding: chunked(\r\n|$)/i);
    const { data, after } = dechunk(chunked.split()!.body);
    expect(after).toBe(0); // nothing after the last chunk
    const plainHead = plain.split()!.head;
    expect(plainHead).toMatch(/^HTTP\/1\.1 200 /);
    expect(plainHead).not.toMatch(/transfer-encoding/i);
    for (const body of [data, plain.split()!.body.toString()]) {
      const texts = [...body.matchAll(/^data: (.*)$/gm)].map((line) => JSON.parse(line[1]!).data?.text).filter(Boolean);
      expect(texts).toEqual(['first', 'zweite Nachricht: Größe', 'third']);
      expect(body.startsWith(': connected\n\n')).toBe(true);
    }
    chunked.socket.destroy();
  });
});
