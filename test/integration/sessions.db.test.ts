import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eraseExpiredData } from '../../src/sessions/retention.js';
import { backendName } from '../support/databases.js';
import { waitUntil } from '../support/waiting.js';
import { openEventStream } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`support chats (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  let key: string;
  beforeAll(async () => {
    t = await startTestServer({ SSE_HEARTBEAT_MS: '200' });
    orgId = await t.createOrg({ name: 'Acme Support' });
    key = (await t.createKey(orgId, 'test')).key;
  });
  afterAll(() => t?.stop());

  const api = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
    fetch(`${t.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { Authorization: `Bearer ${init.key ?? key}`, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const chat = (path: string, chatKey: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${t.url}/chat/public${path}`, {
      method: init.method ?? 'GET',
      headers: { 'X-Chat-Key': chatKey, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const createSession = async (body: Record<string, unknown> = {}) => {
    const res = await api('/v1/sessions', { method: 'POST', body: { agent_language: 'en', agent_name: 'Alice', ...body } });
    expect(res.status).toBe(201);
    const session = await res.json();
    return { session, chatKey: new URL(session.customer_url).hash.replace('#k=', '') };
  };

  it('creates a session with a customer link that cannot be read back', async () => {
    const { session } = await createSession({ customer_name: 'Matti', external_id: 'ticket-1', metadata: { ticket: 1 }, retention_days: 30 });
    expect(session).toMatchObject({
      id: expect.stringMatching(/^ses_/),
      status: 'open',
      agent_language: 'en',
      agent_name: 'Alice',
      customer_language: null,
      customer_name: 'Matti',
      external_id: 'ticket-1',
      metadata: { ticket: 1 },
      retention_days: 30,
      livemode: false,
      closed_at: null,
    });
    expect(session.customer_url).toMatch(new RegExp(`/chat/${session.id}#k=chk_[0-9A-Za-z]{40}$`));
    const read = await (await api(`/v1/sessions/${session.id}`)).json();
    expect(read.customer_url).toBeNull();
    expect(JSON.stringify(await t.server.app.db('sessions').where({ id: session.id }))).not.toContain(
      session.customer_url.split('#k=')[1],
    );
  });

  it('lists sessions newest first with status, external_id and limit filters', async () => {
    const a = (await createSession({ external_id: 'list-x' })).session;
    const b = (await createSession({ external_id: 'list-x' })).session;
    await api(`/v1/sessions/${a.id}/close`, { method: 'POST' });
    const all = await (await api('/v1/sessions?external_id=list-x')).json();
    expect(all.map((s: { id: string }) => s.id)).toEqual([b.id, a.id]);
    const closed = await (await api('/v1/sessions?external_id=list-x&status=closed')).json();
    expect(closed.map((s: { id: string }) => s.id)).toEqual([a.id]);
    expect(await (await api('/v1/sessions?limit=1')).json()).toHaveLength(1);
    expect((await api('/v1/sessions?limit=101')).status).toBe(422);
  });

  it('keeps test and live, and organizations, apart (404)', async () => {
    const { session } = await createSession();
    const live = (await t.createKey(orgId, 'live')).key;
    expect((await api(`/v1/sessions/${session.id}`, { key: live })).status).toBe(404);
    expect((await (await api('/v1/sessions', { key: live })).json()).map((s: { id: string }) => s.id)).not.toContain(session.id);
    const other = (await t.createKey(await t.createOrg(), 'test')).key;
    expect((await api(`/v1/sessions/${session.id}/messages`, { key: other })).status).toBe(404);
    expect((await api(`/v1/sessions/${session.id}/close`, { key: other, method: 'POST' })).status).toBe(404);
  });

  it('translates messages for the other side and learns the customer language', async () => {
    const { session, chatKey } = await createSession();
    const customer = await chat(`/${session.id}/messages`, chatKey, {
      method: 'POST',
      body: { text: 'Hei, tilaukseni on myöhässä ja odotan sitä kovasti.' },
    });
    expect(customer.status).toBe(201);
    const first = await customer.json();
    expect(first).toMatchObject({
      id: expect.any(Number),
      sender: 'customer',
      author_name: 'Customer',
      kind: 'text',
      language: 'fi',
      customer_text: 'Hei, tilaukseni on myöhässä ja odotan sitä kovasti.',
      agent_text: '[en] Hei, tilaukseni on myöhässä ja odotan sitä kovasti.',
      translations: { fi: 'Hei, tilaukseni on myöhässä ja odotan sitä kovasti.', en: '[en] Hei, tilaukseni on myöhässä ja odotan sitä kovasti.' },
    });
    expect((await (await api(`/v1/sessions/${session.id}`)).json()).customer_language).toBe('fi');

    const agent = await (
      await api(`/v1/sessions/${session.id}/messages`, { method: 'POST', body: { sender: 'agent', text: 'Let me check that for you.' } })
    ).json();
    expect(agent).toMatchObject({
      sender: 'agent',
      author_name: 'Alice',
      text: 'Let me check that for you.',
      agent_text: 'Let me check that for you.',
      customer_text: '[fi] Let me check that for you.',
      language: 'en',
    });
    expect(agent.id).toBeGreaterThan(first.id);
  });

  it("takes the page's language_hint only when the text cannot tell: a short greeting, never over a detected language or the session's", async () => {
    const post = async (session: { id: string }, chatKey: string, body: Record<string, unknown>) => {
      const res = await chat(`/${session.id}/messages`, chatKey, { method: 'POST', body });
      expect(res.status).toBe(201);
      return res.json();
    };
    const customerLanguage = async (session: { id: string }) => (await (await api(`/v1/sessions/${session.id}`)).json()).customer_language;

    // "Hola" alone is no language a detector trusts: the hint is, and the session learns it.
    const short = await createSession();
    expect(await post(short.session, short.chatKey, { text: 'Hola', language_hint: 'es-ES' })).toMatchObject({ language: 'es-ES', agent_text: '[en] Hola' });
    expect(await customerLanguage(short.session)).toBe('es-ES');
    expect(await post(short.session, short.chatKey, { text: 'ok', language_hint: 'de' })).toMatchObject({ language: 'es-ES' });

    // A text long enough to tell its language wins over the hint.
    const detected = await createSession();
    expect(await post(detected.session, detected.chatKey, { text: 'Hei, tilaukseni on myöhässä ja odotan sitä kovasti.', language_hint: 'es' })).toMatchObject({ language: 'fi' });
    expect(await customerLanguage(detected.session)).toBe('fi');

    // A session that knows the customer's language keeps it.
    const known = await createSession({ customer_language: 'pt' });
    expect(await post(known.session, known.chatKey, { text: 'Hola', language_hint: 'es' })).toMatchObject({ language: 'pt' });

    // Without a hint a short first message teaches nothing, as before.
    const none = await createSession();
    expect(await post(none.session, none.chatKey, { text: 'Hola' })).toMatchObject({ language: null });
    expect(await customerLanguage(none.session)).toBeNull();

    const refused = await chat(`/${none.session.id}/messages`, none.chatKey, { method: 'POST', body: { text: 'Hola', language_hint: 'Spanish please' } });
    expect(refused.status).toBe(422);
    expect((await refused.json()).detail[0].loc).toEqual(['body', 'language_hint']);
  });

  it('pages messages: the latest when after is 0, then what comes after the cursor', async () => {
    const { session } = await createSession({ customer_language: 'de' });
    expect(await (await api(`/v1/sessions/${session.id}/messages`)).json()).toEqual({ messages: [], cursor: 0 });
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api(`/v1/sessions/${session.id}/messages`, { method: 'POST', body: { sender: 'agent', text: `Message number ${i}`, language: 'en' } });
      ids.push((await res.json()).id);
    }
    const latest = await (await api(`/v1/sessions/${session.id}/messages?limit=2`)).json();
    expect(latest.messages.map((m: { id: number }) => m.id)).toEqual(ids.slice(3));
    expect(latest.cursor).toBe(ids[4]);
    const after = await (await api(`/v1/sessions/${session.id}/messages?after=${ids[1]}&limit=2`)).json();
    expect(after.messages.map((m: { id: number }) => m.id)).toEqual([ids[2], ids[3]]);
    expect(after.cursor).toBe(ids[3]);
    const none = await (await api(`/v1/sessions/${session.id}/messages?after=${ids[4]}`)).json();
    expect(none).toEqual({ messages: [], cursor: ids[4] });
    expect((await api(`/v1/sessions/${session.id}/messages?limit=201`)).status).toBe(422);
    expect((await api(`/v1/sessions/${session.id}/messages?after=-1`)).status).toBe(422);
  });

  it('closes: nobody can post, the customer sees it, a second close is 409', async () => {
    const { session, chatKey } = await createSession();
    const closed = await (await api(`/v1/sessions/${session.id}/close`, { method: 'POST' })).json();
    expect(closed).toMatchObject({ status: 'closed', closed_at: expect.any(String), customer_url: null });
    expect((await api(`/v1/sessions/${session.id}/close`, { method: 'POST' })).status).toBe(409);
    expect((await api(`/v1/sessions/${session.id}/messages`, { method: 'POST', body: { sender: 'agent', text: 'x' } })).status).toBe(409);
    expect((await chat(`/${session.id}/messages`, chatKey, { method: 'POST', body: { text: 'x' } })).status).toBe(409);
    expect((await api(`/v1/sessions/${session.id}/typing`, { method: 'POST', body: { sender: 'agent' } })).status).toBe(409);
    expect((await api(`/v1/sessions/${session.id}/customer-link`, { method: 'POST' })).status).toBe(409);
    expect(await (await chat(`/${session.id}`, chatKey)).json()).toMatchObject({ status: 'closed', company: 'Acme Support' });
  });

  it('a new customer link stops the old one, and the old stream, at once', async () => {
    const { session, chatKey } = await createSession();
    const stream = await openEventStream(`${t.url}/chat/public/${session.id}/stream`, { 'X-Chat-Key': chatKey });
    expect(stream.status).toBe(200);
    const res = await api(`/v1/sessions/${session.id}/customer-link`, { method: 'POST' });
    const rotated = await res.json();
    expect(rotated.customer_url).toMatch(/#k=chk_/);
    const newKey = rotated.customer_url.split('#k=')[1];
    await stream.ended;
    expect((await chat(`/${session.id}`, chatKey)).status).toBe(401);
    expect((await chat(`/${session.id}/messages`, chatKey)).status).toBe(401);
    expect((await chat(`/${session.id}`, newKey)).status).toBe(200);
    expect((await chat(`/${session.id}`, 'chk_wrong')).status).toBe(401);
    expect((await fetch(`${t.url}/chat/public/${session.id}`)).status).toBe(401);
    expect((await chat('/ses_nope', newKey)).status).toBe(404);
  });

  it('a customer stream resumed with the new link from before the rotation keeps going', async () => {
    const { session, chatKey } = await createSession();
    const before = await openEventStream(`${t.url}/chat/public/${session.id}/stream`, { 'X-Chat-Key': chatKey });
    await api(`/v1/sessions/${session.id}/messages`, { method: 'POST', body: { sender: 'agent', text: 'before' } });
    const seen = await before.waitFor((event) => event.event === 'message.created');
    const rotated = await (await api(`/v1/sessions/${session.id}/customer-link`, { method: 'POST' })).json();
    await before.ended;

    const newKey = rotated.customer_url.split('#k=')[1];
    // The backlog holds the rotation; this stream was opened with the link it made, so it stays open.
    const resumed = await openEventStream(`${t.url}/chat/public/${session.id}/stream`, { 'X-Chat-Key': newKey, 'Last-Event-ID': seen.id! });
    expect(resumed.status).toBe(200);
    await api(`/v1/sessions/${session.id}/messages`, { method: 'POST', body: { sender: 'agent', text: 'after' } });
    const after = await resumed.waitFor((event) => event.event === 'message.created');
    expect(after.data.data.text).toBe('after');
    expect(resumed.events.map((event) => event.event)).toEqual(['message.created']);
    resumed.close();
  });

  it('deletes a session with all its messages and events for good', async () => {
    const { session } = await createSession({ customer_language: 'fi' });
    await api(`/v1/sessions/${session.id}/messages`, { method: 'POST', body: { sender: 'agent', text: 'Secret order number 4711' } });
    expect((await api(`/v1/sessions/${session.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/v1/sessions/${session.id}`)).status).toBe(404);
    expect((await api(`/v1/sessions/${session.id}`, { method: 'DELETE' })).status).toBe(404);
    const db = t.server.app.db;
    expect(await db('messages').where({ session_id: session.id })).toHaveLength(0);
    const events = await db('events').where({ session_id: session.id });
    expect(events.map((e) => e.type)).toEqual(['session.deleted']);
    expect(events[0].payload.data).toEqual({ id: session.id, deleted: true });
    expect(JSON.stringify(await db('events').select('payload'))).not.toContain('Secret order number 4711');
  });

  it('erases messages older than retention_days and keeps newer ones', async () => {
    const { session } = await createSession({ customer_language: 'fi', retention_days: 1 });
    const { session: keep } = await createSession({ customer_language: 'fi' });
    for (const s of [session, keep]) {
      await api(`/v1/sessions/${s.id}/messages`, { method: 'POST', body: { sender: 'agent', text: 'Old message' } });
    }
    await api(`/v1/sessions/${session.id}/close`, { method: 'POST' });
    await api(`/v1/sessions/${session.id}/messages`, { method: 'POST', body: { sender: 'agent', text: 'x' } });
    const db = t.server.app.db;
    await db('messages').whereIn('session_id', [session.id, keep.id]).update({ created_at: new Date(Date.now() - 2 * 86_400_000) });
    await eraseExpiredData(db);
    expect(await db('messages').where({ session_id: session.id })).toHaveLength(0);
    expect(await db('messages').where({ session_id: keep.id })).toHaveLength(1);
    expect(JSON.stringify(await db('events').where({ session_id: session.id }).select('payload'))).not.toContain('Old message');
  });

  it('streams session and organization events with metadata and livemode, promptly, and resumes', async () => {
    const { session, chatKey } = await createSession({ metadata: { ticket: 77 }, customer_language: 'fi' });
    const sessionStream = await openEventStream(`${t.url}/v1/sessions/${session.id}/stream`, { Authorization: `Bearer ${key}` });
    const orgStream = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
    const customerStream = await openEventStream(`${t.url}/chat/public/${session.id}/stream`, { 'X-Chat-Key': chatKey });
    expect(sessionStream.status).toBe(200);

    // Pushed, not polled: every stream gets it within waitFor's deadline (no latency threshold: load breaks those).
    const posted = await (await api(`/v1/sessions/${session.id}/messages`, { method: 'POST', body: { sender: 'agent', text: 'Hello there' } })).json();
    for (const stream of [sessionStream, orgStream, customerStream]) {
      const event = await stream.waitFor((e) => e.event === 'message.created' && e.data.data.id === posted.id);
      expect(event.data).toMatchObject({ id: event.id, type: 'message.created', livemode: false, created_at: expect.any(String) });
    }
    const onSession = await sessionStream.waitFor((e) => e.event === 'message.created');
    expect(onSession.data.metadata).toEqual({ ticket: 77 });
    expect(onSession.data.data).toEqual(posted);
    const onCustomer = await customerStream.waitFor((e) => e.event === 'message.created');
    expect(onCustomer.data.metadata).toBeUndefined();

    await api(`/v1/sessions/${session.id}/typing`, { method: 'POST', body: { sender: 'agent' } });
    const typing = await customerStream.waitFor((e) => e.event === 'session.typing');
    expect(typing.data.data).toEqual({ session_id: session.id, sender: 'agent', author_name: 'Alice' });
    expect(typing.id).toBeNull();
    await orgStream.waitFor((e) => e.event === 'session.typing');

    // Heartbeats keep the stream open.
    await waitUntil(() => sessionStream.comments.includes('heartbeat'), 'a heartbeat');

    // Resume after the first message: the stream replays what came after, then goes live.
    const second = await (await api(`/v1/sessions/${session.id}/messages`, { method: 'POST', body: { sender: 'agent', text: 'Second' } })).json();
    await sessionStream.waitFor((e) => e.event === 'message.created' && e.data.data.id === second.id);
    const resumed = await openEventStream(`${t.url}/v1/sessions/${session.id}/stream`, {
      Authorization: `Bearer ${key}`,
      'Last-Event-ID': onSession.id!,
    });
    const replayed = await resumed.waitFor((e) => e.event === 'message.created');
    expect(replayed.data.data.id).toBe(second.id);

    await api(`/v1/sessions/${session.id}/close`, { method: 'POST' });
    await customerStream.waitFor((e) => e.event === 'session.closed');
    const closedEvent = await orgStream.waitFor((e) => e.event === 'session.closed');
    expect(closedEvent.data.metadata).toEqual({ ticket: 77 });
    for (const stream of [sessionStream, orgStream, customerStream, resumed]) stream.close();
  });

  it('keeps other organizations and modes off a stream', async () => {
    const otherKey = (await t.createKey(await t.createOrg(), 'test')).key;
    const liveKey = (await t.createKey(orgId, 'live')).key;
    const other = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${otherKey}` });
    const live = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${liveKey}` });
    const mine = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
    const { session } = await createSession();
    await mine.waitFor((e) => e.event === 'session.created' && e.data.data.id === session.id);
    // A stream gets its events in order: once each has its own session's event, ours would have come first.
    for (const [stream, streamKey] of [[other, otherKey], [live, liveKey]] as const) {
      const res = await api('/v1/sessions', { method: 'POST', key: streamKey, body: { agent_language: 'en' } });
      const own = await res.json();
      await stream.waitFor((e) => e.event === 'session.created' && e.data.data.id === own.id);
      expect(stream.events.map((e) => e.data.data.id)).toEqual([own.id]);
    }
    expect((await api(`/v1/sessions/${session.id}/stream`, { key: otherKey })).status).toBe(404);
    for (const stream of [other, live, mine]) stream.close();
  });

  it('counts the customer endpoints in a window per session', async () => {
    const { session, chatKey } = await createSession();
    const first = await chat(`/${session.id}`, chatKey);
    const second = await chat(`/${session.id}/messages`, chatKey);
    expect(first.headers.get('x-ratelimit-limit')).toBe('600');
    expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(Number(first.headers.get('x-ratelimit-remaining')) - 1);
    const other = await createSession();
    expect((await chat(`/${other.session.id}`, other.chatKey)).headers.get('x-ratelimit-remaining')).toBe('599');
  });

  it('refuses a stream without the scope', async () => {
    const limited = (await t.createKey(orgId, 'test', ['sessions:read'])).key;
    const res = await api('/v1/events', { key: limited });
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toBe('missing scope: events:read');
  });
});
