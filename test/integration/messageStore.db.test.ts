// A message and the event announcing it are stored in one statement when nothing is charged (no
// transaction around it): both or neither, the event naming the stored message's id, its webhook
// deliveries queued with it, and nothing at all for a session closed after it was read. Also the
// organization terms every instance keeps in memory: the database refuses to change them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeMessage } from '../../src/sessions/messages.js';
import { findSession } from '../../src/sessions/sessions.js';
import { backendName } from '../support/databases.js';
import { openEventStream } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`storing a message with its event (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let orgId: string;
  const db = () => t.server.app.db;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${t.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };

  beforeAll(async () => {
    t = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' });
    orgId = await t.createOrg({ balance: 10 });
    key = (await t.createKey(orgId, 'test')).key;
    const endpoint = await api('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hook', enabled_events: ['message.created'] });
    expect(endpoint.status).toBe(201);
  });
  afterAll(() => t?.stop());

  it('stores the event as streamed, naming the message, with its webhook delivery', async () => {
    const session = (await api('POST', '/v1/sessions', { agent_language: 'en', customer_language: 'de' })).body;
    const stream = await openEventStream(`${t.url}/v1/sessions/${session.id}/stream`, { Authorization: `Bearer ${key}` });
    const posted = await api('POST', `/v1/sessions/${session.id}/messages`, { sender: 'agent', text: 'Where is my order?' });
    expect(posted.status).toBe(201);
    const streamed = await stream.waitFor((event) => event.event === 'message.created');
    stream.close();

    expect(streamed.data.data).toEqual(posted.body);
    const stored = await db()('events').where({ id: streamed.id }).first();
    expect(stored).toMatchObject({ message_id: posted.body.id, session_id: session.id, type: 'message.created' });
    expect(stored.payload).toEqual(streamed.data);
    const message = await db()('messages').where({ id: posted.body.id }).first();
    expect(message.created_at.toISOString()).toBe(posted.body.created_at);
    expect(await db()('webhook_deliveries').where({ event_id: streamed.id }).select('event_type')).toEqual([{ event_type: 'message.created' }]);
  });

  it('stores nothing, and announces nothing, for a session closed after it was read', async () => {
    const session = (await api('POST', '/v1/sessions', { agent_language: 'en', customer_language: 'de' })).body;
    const asRead = await findSession(db(), { orgId, mode: 'test' }, session.id);
    expect((await api('POST', `/v1/sessions/${session.id}/close`)).status).toBe(200);
    const published: unknown[] = [];
    const unsubscribe = t.server.app.events.subscribe((event) => void (event.orgId === orgId && published.push(event)));
    const count = async (table: string) => Number((await db()(table).count({ n: '*' }).first())!.n);
    const [eventsBefore, deliveriesBefore] = [await count('events'), await count('webhook_deliveries')];

    for (const sender of ['agent', 'customer'] as const) {
      await expect(storeMessage(t.server.app, asRead, { sender, text: 'Too late' }, null)).rejects.toMatchObject({ status: 409 });
    }
    unsubscribe();
    expect(await db()('messages').where({ session_id: session.id })).toEqual([]);
    expect([await count('events'), await count('webhook_deliveries')]).toEqual([eventsBefore, deliveriesBefore]);
    expect(published).toEqual([]);
  });

  it('stores messages posted to one session at once together, in order, each with its own answer, event and delivery', async () => {
    const session = (await api('POST', '/v1/sessions', { agent_language: 'en', customer_language: 'de' })).body;
    const asRead = await findSession(db(), { orgId, mode: 'test' }, session.id);
    const published: Array<{ seq: number | null; payload: { data: { id: number; text: string } } }> = [];
    const unsubscribe = t.server.app.events.subscribe((event) => void (event.sessionId === session.id && published.push(event as never)));
    const texts = Array.from({ length: 12 }, (_, i) => `Message ${i}`);
    const posted = await Promise.all(
      texts.map((text) => storeMessage(t.server.app, asRead, { sender: 'customer', text, language: 'de' }, null)),
    );
    unsubscribe();

    // Each answer is its own message; ids ascend in the order the posts were made.
    expect(posted.map(({ row }) => row.text)).toEqual(texts);
    const ids = posted.map(({ row }) => row.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // The first went alone; the eleven that arrived while it was in flight went in one statement (one transaction).
    const stored = await db().raw(`SELECT id, text, CAST(xmin AS text) AS tx FROM messages WHERE session_id = ? ORDER BY id`, [session.id]);
    expect(stored.rows.map((row: { text: string }) => row.text)).toEqual(texts);
    expect(new Set(stored.rows.slice(1).map((row: { tx: string }) => row.tx)).size).toBe(1);
    expect(stored.rows[0].tx).not.toBe(stored.rows[1].tx);

    const events = await db()('events').where({ session_id: session.id, type: 'message.created' }).orderBy('seq');
    expect(events.map((event) => event.message_id)).toEqual(ids);
    expect(events.map((event) => event.payload.data.text)).toEqual(texts);
    expect(events.map((event) => event.payload.data.id)).toEqual(ids);
    expect(published.map((event) => [event.seq, event.payload.data.id, event.payload.data.text])).toEqual(
      events.map((event) => [event.seq, event.message_id, event.payload.data.text]),
    );
    const deliveries = await db()('webhook_deliveries').whereIn('event_id', events.map((event) => event.id)).select('event_id');
    expect(deliveries.map((delivery) => delivery.event_id).sort()).toEqual(events.map((event) => event.id).sort());
    const customer = (await api('GET', `/v1/sessions/${session.id}`)).body;
    expect(customer.customer_last_seen_at).not.toBeNull();
  });

  it('fails only the message the database refused when it was posted with others at once', async () => {
    const session = (await api('POST', '/v1/sessions', { agent_language: 'en', customer_language: 'de' })).body;
    const asRead = await findSession(db(), { orgId, mode: 'test' }, session.id);
    const post = (text: string, requestRef: string | null) =>
      storeMessage(t.server.app, asRead, { sender: 'agent', text, language: 'de' }, requestRef).then(
        ({ row }) => row.text,
        (error: { code?: string }) => error.code,
      );
    // Two posts with one idempotency reference in one group: the unique reference refuses the group.
    const ref = `req_batch_${session.id}`;
    const outcomes = await Promise.all([post('first', null), post('second', ref), post('same ref', ref), post('third', null)]);
    expect(outcomes[0]).toBe('first');
    expect(outcomes[1]).toBe('second');
    expect(outcomes[2]).toBe('23505'); // unique_violation, which the API answers 409
    expect(outcomes[3]).toBe('third');
    const stored = await db()('messages').where({ session_id: session.id }).orderBy('id').select('text');
    expect(stored.map((row) => row.text)).toEqual(['first', 'second', 'third']);
    const events = await db()('events').where({ session_id: session.id, type: 'message.created' }).orderBy('seq');
    expect(events.map((event) => event.payload.data.text)).toEqual(['first', 'second', 'third']);
  });

  it('refuses every message of a group posted to a session closed meanwhile', async () => {
    const session = (await api('POST', '/v1/sessions', { agent_language: 'en', customer_language: 'de' })).body;
    const asRead = await findSession(db(), { orgId, mode: 'test' }, session.id);
    expect((await api('POST', `/v1/sessions/${session.id}/close`)).status).toBe(200);
    const statuses = await Promise.all(
      ['a', 'b', 'c'].map((text) => storeMessage(t.server.app, asRead, { sender: 'customer', text }, null).then(() => 201, (error: { status?: number }) => error.status)),
    );
    expect(statuses).toEqual([409, 409, 409]);
    expect(await db()('messages').where({ session_id: session.id })).toEqual([]);
  });

  it('refuses to change an organization\'s currency, rates or billing, which instances keep in memory', async () => {
    const refused = /do not change: instances keep them in memory/;
    await expect(db()('organizations').where({ id: orgId }).update({ currency: 'USD' })).rejects.toThrow(refused);
    await expect(db()('organizations').where({ id: orgId }).update({ text_rate_micros: 1 })).rejects.toThrow(refused);
    await expect(db()('organizations').where({ id: orgId }).update({ voice_rate_micros: 1 })).rejects.toThrow(refused);
    await expect(db()('organizations').where({ id: orgId }).update({ balance_micros: null })).rejects.toThrow(refused);
    // The balance itself moves freely.
    await db()('organizations').where({ id: orgId }).update({ balance_micros: 5_000_000 });
    expect((await db()('organizations').where({ id: orgId }).first()).balance_micros).toBe(5_000_000);
  });
});
