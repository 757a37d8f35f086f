import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { openEventStream } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`calls control plane (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  let key: string;
  beforeAll(async () => {
    t = await startTestServer({ ICE_SERVERS: '[{"urls":"stun:stun.example.org:3478"}]', PUBLIC_BASE_URL: 'https://calls.example.com' });
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
  const side = (path: string, callKey: string | undefined, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${t.url}/calls/public${path}`, {
      method: init.method ?? 'GET',
      headers: { ...(callKey ? { 'X-Call-Key': callKey } : {}), 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const keyOf = (url: string) => url.split('#k=')[1];
  const createCall = async (body: Record<string, unknown> = {}) => {
    const res = await api('/v1/calls', { method: 'POST', body: { agent_language: 'en', agent_name: 'Alice', ...body } });
    expect(res.status).toBe(201);
    const call = await res.json();
    return { call, agentKey: keyOf(call.agent_url), customerKey: keyOf(call.customer_url) };
  };

  it('creates a call with a link for each side, each with its own key', async () => {
    const { call, agentKey, customerKey } = await createCall({ metadata: { ticket: 9 }, external_id: 'crm-1' });
    expect(call).toMatchObject({
      id: expect.stringMatching(/^call_/),
      status: 'open',
      agent_language: 'en',
      customer_language: null,
      video: true,
      livemode: false,
      metadata: { ticket: 9 },
      external_id: 'crm-1',
      support_session_id: null,
      ended_at: null,
    });
    expect(call.agent_url).toBe(`https://calls.example.com/call/${call.id}#k=${agentKey}`);
    expect(agentKey).not.toBe(customerKey);
    const stored = JSON.stringify(await t.server.app.db('calls').where({ id: call.id }));
    expect(stored).not.toContain(agentKey);
    expect(stored).not.toContain(customerKey);
    const read = await (await api(`/v1/calls/${call.id}`)).json();
    expect(read.agent_url).toBeUndefined();
  });

  it('replays a create under the same Idempotency-Key with the same links, without storing their keys readable', async () => {
    const create = () =>
      fetch(`${t.url}/v1/calls`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'create-once' },
        body: JSON.stringify({ agent_language: 'en' }),
      });
    const first = await (await create()).json();
    const again = await create();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(first);
    const everything = JSON.stringify(await t.server.app.db('idempotency_keys'));
    expect(everything).not.toContain(keyOf(first.agent_url));
    expect(everything).not.toContain(keyOf(first.customer_url));
  });

  it('lists calls newest first with filters, and keeps modes apart', async () => {
    const a = (await createCall({ external_id: 'list-c' })).call;
    const b = (await createCall({ external_id: 'list-c' })).call;
    await api(`/v1/calls/${a.id}/end`, { method: 'POST' });
    expect((await (await api('/v1/calls?external_id=list-c')).json()).map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
    expect((await (await api('/v1/calls?external_id=list-c&status=ended')).json()).map((c: { id: string }) => c.id)).toEqual([a.id]);
    const live = (await t.createKey(orgId, 'live')).key;
    expect((await api(`/v1/calls/${a.id}`, { key: live })).status).toBe(404);
  });

  it('joins: who the call is with, and the media addresses once both languages are known', async () => {
    const { call, agentKey, customerKey } = await createCall({ customer_name: 'Matti' });
    const agent = await (await side(`/${call.id}`, agentKey)).json();
    expect(agent).toMatchObject({
      id: call.id,
      company: 'Acme Support',
      role: 'agent',
      status: 'open',
      ready: false,
      my_language: 'en',
      my_name: 'Alice',
      other_language: null,
      other_name: 'Matti',
      ice_servers: [{ urls: 'stun:stun.example.org:3478' }],
      stream: null,
      listen: null,
    });
    const me = await side(`/${call.id}/me`, customerKey, { method: 'POST', body: { language: 'fi' } });
    expect(me.status).toBe(200);
    const customer = await me.json();
    expect(customer).toMatchObject({ role: 'customer', ready: true, my_language: 'fi', other_language: 'en' });
    expect(customer.stream).toMatchObject({ path: expect.stringMatching(/^\/media\/stream\/ch_/), source_id: 'customer' });
    expect(customer.listen.path).toMatch(/^\/media\/listen\/ch_/);
    const agentReady = await (await side(`/${call.id}`, agentKey)).json();
    // Each side hears the other: my listen channel is the other side's stream channel.
    expect(agentReady.listen.channel_id).toBe(customer.stream.channel_id);
    expect(customer.listen.channel_id).toBe(agentReady.stream.channel_id);
  });

  it('refuses a missing or wrong call key with 401 and an unknown call with 404', async () => {
    const { call } = await createCall();
    expect((await side(`/${call.id}`, undefined)).status).toBe(401);
    expect((await side(`/${call.id}`, 'ck_wrong')).status).toBe(401);
    expect((await side('/call_nope', 'ck_wrong')).status).toBe(404);
    expect((await side(`/${call.id}/me`, 'ck_wrong', { method: 'POST', body: { name: 'x' } })).status).toBe(401);
  });

  it('a new link stops the old one at once', async () => {
    const { call, customerKey } = await createCall();
    const res = await api(`/v1/calls/${call.id}/link`, { method: 'POST', body: { side: 'customer' } });
    const { url } = await res.json();
    expect((await side(`/${call.id}`, customerKey)).status).toBe(401);
    expect((await side(`/${call.id}`, keyOf(url))).status).toBe(200);
    expect((await api(`/v1/calls/${call.id}/link`, { method: 'POST', body: { side: 'nobody' } })).status).toBe(422);
  });

  it('customer hang-up only leaves; agent hang-up ends the call for both; then 409', async () => {
    const { call, agentKey, customerKey } = await createCall({ customer_language: 'fi' });
    const left = await (await side(`/${call.id}/end`, customerKey, { method: 'POST' })).json();
    expect(left.status).toBe('open');
    expect((await side(`/${call.id}`, customerKey)).status).toBe(200);
    const ended = await (await side(`/${call.id}/end`, agentKey, { method: 'POST' })).json();
    expect(ended).toMatchObject({ status: 'ended', ready: false, stream: null });
    expect((await (await api(`/v1/calls/${call.id}`)).json()).status).toBe('ended');
    expect((await side(`/${call.id}/end`, agentKey, { method: 'POST' })).status).toBe(409);
    expect((await side(`/${call.id}/me`, customerKey, { method: 'POST', body: { name: 'M' } })).status).toBe(409);
    expect((await api(`/v1/calls/${call.id}/end`, { method: 'POST' })).status).toBe(409);
    expect((await api(`/v1/calls/${call.id}/link`, { method: 'POST', body: { side: 'agent' } })).status).toBe(409);
    expect((await api(`/v1/calls/${call.id}/phone-line`, { method: 'POST', body: {} })).status).toBe(409);
    expect((await api(`/v1/calls/${call.id}/dial`, { method: 'POST', body: { to: '+358401234567' } })).status).toBe(409);
    // Joining still tells an ended call apart.
    expect((await (await side(`/${call.id}`, customerKey)).json()).status).toBe('ended');
  });

  it('phone lines: a UUID with the public host and port; a new line replaces the old', async () => {
    const { call } = await createCall();
    const first = await (await api(`/v1/calls/${call.id}/phone-line`, { method: 'POST', body: {} })).json();
    expect(first).toEqual({ audiosocket_id: expect.stringMatching(/^[0-9a-f-]{36}$/), host: 'calls.example.com', port: t.server.ports.audiosocket });
    const second = await (await api(`/v1/calls/${call.id}/phone-line`, { method: 'POST', body: { side: 'agent' } })).json();
    expect(second.audiosocket_id).not.toBe(first.audiosocket_id);
    const row = await t.server.app.db('calls').where({ id: call.id }).first();
    expect(row.customer_line_id).toBe(first.audiosocket_id);
    expect(row.agent_line_id).toBe(second.audiosocket_id);
  });

  it('dial: 422 for a number not in international form, 400 in test mode, 400 without a connector', async () => {
    const { call } = await createCall();
    expect((await api(`/v1/calls/${call.id}/dial`, { method: 'POST', body: { to: '0401234567' } })).status).toBe(422);
    const testMode = await api(`/v1/calls/${call.id}/dial`, { method: 'POST', body: { to: '+358401234567' } });
    expect(testMode.status).toBe(400);
    expect((await testMode.json()).detail).toMatch(/test mode/);
    const live = (await t.createKey(await t.createOrg({ balance: 5 }), 'live')).key;
    const liveCall = await (await api('/v1/calls', { method: 'POST', key: live, body: { agent_language: 'en' } })).json();
    const noConnector = await api(`/v1/calls/${liveCall.id}/dial`, { method: 'POST', key: live, body: { to: '+358401234567' } });
    expect(noConnector.status).toBe(400);
    expect((await noConnector.json()).detail).toMatch(/telephony connector/);
  });

  it('refuses a live call once a prepaid balance has run out (402)', async () => {
    const broke = await t.createOrg({ balance: 0 });
    const live = (await t.createKey(broke, 'live')).key;
    expect((await api('/v1/calls', { method: 'POST', key: live, body: { agent_language: 'en' } })).status).toBe(402);
    const test = (await t.createKey(broke, 'test')).key;
    expect((await api('/v1/calls', { method: 'POST', key: test, body: { agent_language: 'en' } })).status).toBe(201);
  });

  it('emits call events with metadata and livemode on the organization stream', async () => {
    const stream = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
    const { call, agentKey, customerKey } = await createCall({ metadata: { crm: 'x1' } });
    await side(`/${call.id}`, agentKey);
    await side(`/${call.id}/me`, customerKey, { method: 'POST', body: { language: 'sv', name: 'Sven' } });
    await api(`/v1/calls/${call.id}/link`, { method: 'POST', body: { side: 'agent' } });
    await side(`/${call.id}/end`, customerKey, { method: 'POST' });
    await api(`/v1/calls/${call.id}/end`, { method: 'POST' });
    for (const type of ['call.created', 'call.joined', 'call.updated', 'call.link_rotated', 'call.left', 'call.ended']) {
      const event = await stream.waitFor((e) => e.event === type && e.data.data.id === call.id);
      expect(event.data).toMatchObject({ type, livemode: false, metadata: { crm: 'x1' } });
    }
    const updated = await stream.waitFor((e) => e.event === 'call.updated');
    expect(updated.data.data).toMatchObject({ customer_language: 'sv', customer_name: 'Sven', side: 'customer', language_changed: true });
    stream.close();
  });
});
