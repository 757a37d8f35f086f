// Event fan-out with many streams: an event reaches only the streams that may see it, is serialised
// once however many streams send it, and is published only after the answer of the request that
// made it was sent.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { backendName } from '../support/databases.js';
import { openEventStream, type EventStreamClient } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { waitUntil } from '../support/waiting.js';

describe(`event fan-out (${backendName})`, () => {
  /** Request URLs as the server logs them, the moment their response has been sent. */
  const answered: string[] = [];
  let t: TestServer;
  let orgId: string;
  let key: string;
  const opened: EventStreamClient[] = [];

  beforeAll(async () => {
    t = await startTestServer({}, { logLevel: 'info', logDestination: { write: (line: string) => void answered.push(JSON.parse(line).req?.url) } });
    orgId = await t.createOrg({ name: 'Fan-out Org' });
    key = (await t.createKey(orgId, 'test')).key;
  });
  afterEach(async () => {
    for (const stream of opened.splice(0)) stream.close();
    await waitUntil(() => t.server.app.eventStreams.count() === 0, 'the streams to close');
    vi.restoreAllMocks();
  });
  afterAll(() => t?.stop());

  const bearer = (apiKey: string) => ({ Authorization: `Bearer ${apiKey}` });
  const post = (path: string, apiKey: string, body: unknown) =>
    fetch(`${t.url}${path}`, { method: 'POST', headers: { ...bearer(apiKey), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  async function createSession(apiKey = key) {
    const res = await post('/v1/sessions', apiKey, { agent_language: 'en', customer_language: 'en' });
    expect(res.status).toBe(201);
    const session = await res.json();
    return { id: session.id as string, chatKey: session.customer_url.split('#k=')[1] as string };
  }
  async function open(path: string, headers: Record<string, string>) {
    const stream = await openEventStream(`${t.url}${path}`, headers);
    expect(stream.status).toBe(200);
    opened.push(stream);
    return stream;
  }
  /** Resolves once the stream's connected comment arrived (it is subscribed). */
  const connected = (stream: EventStreamClient) => waitUntil(() => stream.comments.includes('connected'), 'the stream to connect');

  it('never sends an event to a stream of another organization, another mode or another session', async () => {
    const other = await t.createOrg({ name: 'Other Org' });
    const otherKey = (await t.createKey(other, 'test')).key;
    const liveKey = (await t.createKey(orgId, 'live')).key;
    const session = await createSession();
    const otherSession = await createSession();

    const mine = await open('/v1/events', bearer(key));
    const sessionStream = await open(`/v1/sessions/${session.id}/stream`, bearer(key));
    const otherOrg = await open('/v1/events', bearer(otherKey));
    const otherMode = await open('/v1/events', bearer(liveKey));
    const otherSessionStream = await open(`/v1/sessions/${otherSession.id}/stream`, bearer(key));
    await Promise.all([mine, sessionStream, otherOrg, otherMode, otherSessionStream].map(connected));

    expect((await post(`/v1/sessions/${session.id}/messages`, key, { sender: 'agent', text: 'for my streams only' })).status).toBe(201);
    const created = await mine.waitFor((event) => event.event === 'message.created');
    await sessionStream.waitFor((event) => event.id === created.id);

    // Then an event each of the others may see: what they received before it is all they were sent.
    expect((await post('/v1/sessions', otherKey, { agent_language: 'en' })).status).toBe(201);
    expect((await post('/v1/sessions', liveKey, { agent_language: 'en' })).status).toBe(201);
    expect((await post(`/v1/sessions/${otherSession.id}/messages`, key, { sender: 'agent', text: 'elsewhere' })).status).toBe(201);
    await otherOrg.waitFor((event) => event.event === 'session.created');
    await otherMode.waitFor((event) => event.event === 'session.created');
    await otherSessionStream.waitFor((event) => event.event === 'message.created');
    expect(otherOrg.events.map((event) => event.event)).toEqual(['session.created']);
    expect(otherMode.events.map((event) => event.event)).toEqual(['session.created']);
    expect(otherSessionStream.events.map((event) => event.data.data.text)).toEqual(['elsewhere']);
    expect(sessionStream.events.map((event) => event.event)).toEqual(['message.created']);
  });

  it('serialises an event once for all streams that show it as stored, and once more for the customers', async () => {
    const session = await createSession();
    const streams = [
      ...(await Promise.all([0, 1, 2, 3, 4].map(() => open('/v1/events', bearer(key))))),
      ...(await Promise.all([0, 1].map(() => open(`/v1/sessions/${session.id}/stream`, bearer(key))))),
    ];
    const customers = [await open(`/chat/public/${session.id}/stream`, { 'X-Chat-Key': session.chatKey })];
    await Promise.all([...streams, ...customers].map(connected));

    const serialised: string[] = [];
    const stringify = JSON.stringify;
    vi.spyOn(JSON, 'stringify').mockImplementation(function (this: unknown, value: any, ...rest: any[]) {
      if (value && typeof value === 'object' && value.type === 'message.created' && 'livemode' in value) serialised.push(value.id);
      return stringify.call(JSON, value, ...(rest as []));
    } as typeof JSON.stringify);

    expect((await post(`/v1/sessions/${session.id}/messages`, key, { sender: 'agent', text: 'to eight streams' })).status).toBe(201);
    const received = await Promise.all([...streams, ...customers].map((stream) => stream.waitFor((event) => event.event === 'message.created')));
    const eventId = received[0]!.id!;
    expect(received.every((event) => event.id === eventId)).toBe(true);
    expect(received.at(-1)!.data.metadata).toBeUndefined(); // the customer's view
    // Once to store it (the message's id is filled into those bytes, which the seven agent streams are
    // sent), once as the customer sees it: never once per stream.
    expect(serialised.filter((id) => id === eventId)).toHaveLength(2);
  });

  it('streams a stored event live, replayed and as stored in the same bytes, its row id filled in', async () => {
    const live = await open('/v1/events', bearer(key));
    await connected(live);
    const session = await createSession();
    const created = await live.waitFor((event) => event.event === 'session.created' && event.data.data.id === session.id);
    const res = await post(`/v1/sessions/${session.id}/messages`, key, { sender: 'agent', text: 'the "id":-1 of {"id":0} stays text' });
    expect(res.status).toBe(201);
    const message = await res.json();
    const sent = await live.waitFor((event) => event.event === 'message.created' && event.data.data.id === message.id);
    expect(sent.data.data).toEqual(message);
    const [stored] = await t.server.app.db('events').where({ id: sent.id }).select(t.server.app.db.raw('CAST(payload AS text) AS payload'));
    expect(stored.payload).toBe(sent.dataText);
    const replay = await open('/v1/events', { ...bearer(key), 'Last-Event-ID': created.id! });
    expect((await replay.waitFor((event) => event.id === sent.id)).dataText).toBe(sent.dataText);
  });

  it('publishes an event only after the answer of the request that made it was sent', async () => {
    const session = await createSession();
    const stream = await open(`/v1/sessions/${session.id}/stream`, bearer(key));
    await connected(stream);
    const path = `/v1/sessions/${session.id}/messages`;
    let answeredBeforePublished: boolean | undefined;
    const stopListening = t.server.app.events.subscribeTo({ orgId, mode: 'test', sessionId: session.id }, () => {
      answeredBeforePublished ??= answered.includes(path);
    });
    const res = await post(path, key, { sender: 'agent', text: 'answer first' });
    expect(res.status).toBe(201);
    await stream.waitFor((event) => event.event === 'message.created');
    stopListening();
    expect(answeredBeforePublished).toBe(true);
  });
});
