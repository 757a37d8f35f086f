// No secret reaches the log: a whole call (join, media sockets, a phone line, hang-up) and a whole chat
// (create, the customer's join, messages, typing, stream, a new link) with the server logging at
// `trace` into a buffer, and then not one of the secrets used anywhere in what it wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Listener, Pbx, callApi, connect, listenUrl, sine, streamAudio, streamUrl, whenClosed } from '../media/support.js';
import { waitUntil } from '../support/waiting.js';
import { backendName } from '../support/databases.js';
import { openEventStream } from '../support/sse.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

describe(`the log of a full call and chat holds no secret (${backendName})`, () => {
  const lines: string[] = [];
  const secrets = new Map<string, string>();
  const remember = (what: string, secret: string) => {
    expect(secret.length, what).toBeGreaterThanOrEqual(16);
    secrets.set(what, secret);
    return secret;
  };
  let t: TestServer;
  let stopped = false;

  beforeAll(async () => {
    t = await startTestServer({ AUDIOSOCKET_PORT: '0' }, { logLevel: 'trace', logDestination: { write: (line: string) => lines.push(line) } });
    remember('admin token', TEST_ADMIN_TOKEN);
  });
  afterAll(async () => {
    if (!stopped) await t?.stop();
  });

  it('runs a call and a chat, then finds none of their secrets in the log', async () => {
    const orgId = await t.createOrg({ name: 'Logged Org' });
    const apiKey = remember('API key', (await t.createKey(orgId, 'test')).key);
    const calls = callApi(t);
    const json = { 'Content-Type': 'application/json' };

    // The API key in every place a client may put it, the query string included.
    expect((await fetch(`${t.url}/v1/account`, { headers: { 'X-Api-Key': apiKey } })).status).toBe(200);
    expect((await fetch(`${t.url}/v1/account?api_key=${apiKey}`, { headers: { Authorization: `Bearer ${apiKey}` } })).status).toBe(200);
    expect((await fetch(`${t.url}/v1/nowhere?api_key=${apiKey}&access_token=${apiKey}`)).status).toBe(404);

    // ---- a call ----
    const call = await calls.createCall(apiKey, { customer_language: 'fi' });
    remember('agent call key', call.agentKey);
    remember('customer call key', call.customerKey);
    const agent = await calls.join(call.id, call.agentKey);
    const customer = await calls.join(call.id, call.customerKey);
    for (const [who, join] of [['agent', agent], ['customer', customer]] as const) {
      remember(`${who} stream token`, join.stream!.token);
      remember(`${who} listen unlock`, join.listen!.unlock);
    }
    // Test mode: each side hears its own voice back.
    const customerEar = await Listener.open(listenUrl(t, customer));
    const customerMouth = await connect(streamUrl(t, customer));
    await streamAudio(customerMouth, sine(4_800, 24_000, 300));
    await customerEar.waitForBytes(4_800 * 2);
    // Media addresses requested as plain HTTP are logged by the request log: their secrets must not be.
    expect((await fetch(`${t.url}${agent.stream!.path}?token=${agent.stream!.token}&source_id=agent`)).status).toBe(404);
    expect((await fetch(`${t.url}${customer.listen!.path}?unlock=${customer.listen!.unlock}`)).status).toBe(404);
    const wrongToken = await fetch(`${t.url}/calls/public/${call.id}`, { headers: { 'X-Call-Key': `${call.agentKey}x` } });
    expect(wrongToken.status).toBe(401);

    // A phone line plays the customer for a moment, then the PBX hangs up.
    const lineRes = await calls.api(`/v1/calls/${call.id}/phone-line`, apiKey, { method: 'POST', body: { side: 'customer' } });
    const lineId = remember('line id', (await lineRes.json()).audiosocket_id);
    secrets.set('line id without dashes', lineId.replace(/-/g, ''));
    const pbx = await Pbx.connect(t.server.ports.audiosocket!);
    pbx.sendUuid(lineId);
    await waitUntil(() => (t.server.media.room(call.id)?.stats().endpoints.line ?? 0) === 1, 'the line to join');
    pbx.send(0x10, sine(160, 8_000, 300));
    pbx.send(0x03, Buffer.from('7'));
    pbx.send(0x00);
    await pbx.ended;
    // An unknown line id is logged as refused, by fingerprint.
    const stranger = await Pbx.connect(t.server.ports.audiosocket!);
    const unknownLine = remember('unknown line id', '0f0e0d0c-0b0a-4908-8706-050403020100');
    stranger.sendUuid(unknownLine);
    await stranger.ended;

    // A new link for the agent, then the agent hangs up: the call ends for both.
    const link = await calls.api(`/v1/calls/${call.id}/link`, apiKey, { method: 'POST', body: { side: 'agent' } });
    expect(link.status).toBe(200);
    const newAgentKey = remember('new agent call key', calls.keyOf((await link.json()).url));
    const hungUp = await fetch(`${t.url}/calls/public/${call.id}/end`, { method: 'POST', headers: { 'X-Call-Key': newAgentKey } });
    expect(hungUp.status).toBe(200);
    await whenClosed(customerMouth);

    // ---- a chat ----
    const created = await calls.api('/v1/sessions', apiKey, {
      method: 'POST',
      body: { agent_language: 'en', customer_language: 'fi', agent_name: 'Alice' },
    });
    const session = await created.json();
    const chatKey = remember('chat key', calls.keyOf(session.customer_url));
    const customerHeaders = { 'X-Chat-Key': chatKey, ...json };
    expect((await fetch(`${t.url}/chat/public/${session.id}`, { headers: customerHeaders })).status).toBe(200);
    const stream = await openEventStream(`${t.url}/chat/public/${session.id}/stream`, { 'X-Chat-Key': chatKey });
    expect(stream.status).toBe(200);
    const posted = await fetch(`${t.url}/chat/public/${session.id}/messages`, {
      method: 'POST',
      headers: customerHeaders,
      body: JSON.stringify({ text: 'Hei, tarvitsen apua tilaukseni kanssa.' }),
    });
    expect(posted.status).toBe(201);
    expect((await fetch(`${t.url}/chat/public/${session.id}/typing`, { method: 'POST', headers: customerHeaders })).status).toBe(204);
    expect((await fetch(`${t.url}/chat/public/${session.id}/messages?after=0`, { headers: customerHeaders })).status).toBe(200);
    await stream.waitFor((event) => event.event === 'message.created');
    const agentMessage = await calls.api(`/v1/sessions/${session.id}/messages`, apiKey, {
      method: 'POST',
      body: { sender: 'agent', text: 'Hello, how can I help?' },
    });
    expect(agentMessage.status).toBe(201);

    // A new link: the old key is refused and its stream ends; the new one works.
    const rotated = await calls.api(`/v1/sessions/${session.id}/customer-link`, apiKey, { method: 'POST' });
    const newChatKey = remember('new chat key', calls.keyOf((await rotated.json()).customer_url));
    await stream.ended;
    expect((await fetch(`${t.url}/chat/public/${session.id}`, { headers: customerHeaders })).status).toBe(401);
    expect((await fetch(`${t.url}/chat/public/${session.id}`, { headers: { 'X-Chat-Key': newChatKey } })).status).toBe(200);

    // The admin token on an admin answer and on an unknown path; a cookie for good measure.
    expect((await fetch(`${t.url}/admin/orgs/org_nope/keys`, { method: 'POST', headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...json }, body: '{"mode":"test"}' })).status).toBe(404);
    expect((await fetch(`${t.url}/admin/nowhere`, { headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, Cookie: `session=${chatKey}` } })).status).toBe(404);

    customerEar.close();
    await t.stop();
    stopped = true;

    const log = lines.join('');
    // The log is really there, at the detail asked for, and saw what happened.
    expect(lines.length).toBeGreaterThan(30);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(log).toContain(`/calls/public/${call.id}`);
    expect(log).toContain(`/chat/public/${session.id}`);
    expect(log).toContain('audiosocket: line joined');
    expect(log).toContain('audiosocket: line refused');
    expect(lines.some((line) => JSON.parse(line).level === 10 || JSON.parse(line).level === 20)).toBe(true);

    const leaked = [...secrets].filter(([, secret]) => log.includes(secret)).map(([what]) => what);
    expect(leaked).toEqual([]);
    // Redacted where they were, not merely absent.
    expect(log).toContain('[redacted]');
  });
});
