// Guessing call keys, chat keys, admin tokens, media secrets and line ids: refusals count per client
// address (never against the holder of what was guessed at), and an address over the limit is refused
// unchecked. The servers here sit "behind one proxy" (TRUST_PROXY=1), so X-Forwarded-For gives each
// simulated client its own address; one server without it shows that a client cannot choose its own.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LINE_ERROR } from '../../src/calls/media/transports/audiosocket/protocol.js';
import { Pbx, callApi, streamUrl } from '../media/support.js';
import { backendName } from '../support/databases.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

const FAILED_ATTEMPTS = 5;
const PER_OBJECT_LIMIT = 10;

/** A request as a client at `address` sends it (through the one trusted proxy). */
function from(t: TestServer, address: string) {
  return (path: string, headers: Record<string, string> = {}, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${t.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { 'X-Forwarded-For': address, 'Content-Type': 'application/json', ...headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
}

/** The status and Retry-After a WebSocket upgrade from `address` gets (101 when it opens). */
function upgradeFrom(url: string, address: string): Promise<{ status: number; retryAfter: string | null; detail?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { 'X-Forwarded-For': address } });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, retryAfter: null });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: (res.headers['retry-after'] as string) ?? null, detail: JSON.parse(body).detail }));
    });
    ws.once('error', reject);
  });
}

async function expectLockedOut(res: Response) {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect((await res.json()).detail).toMatch(/^too many failed attempts from your address; retry after \d+ seconds$/);
}

describe(`guessing is limited per client address (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let calls: ReturnType<typeof callApi>;
  beforeAll(async () => {
    t = await startTestServer({
      TRUST_PROXY: '1',
      FAILED_ATTEMPTS_PER_MINUTE: String(FAILED_ATTEMPTS),
      RATE_LIMIT_PER_MINUTE: String(PER_OBJECT_LIMIT),
      AUDIOSOCKET_PORT: '0',
    });
    key = (await t.createKey(await t.createOrg({ name: 'Guessed Org' }), 'test')).key;
    calls = callApi(t);
  });
  afterAll(() => t?.stop());

  const newSession = async () => {
    const res = await calls.api('/v1/sessions', key, {
      method: 'POST',
      body: { agent_language: 'en', customer_language: 'fi', agent_name: 'Alice' },
    });
    const session = await res.json();
    return { id: session.id as string, chatKey: calls.keyOf(session.customer_url) };
  };

  it("wrong keys from many addresses never spend the call's or the session's budget", async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const session = await newSession();
    // Many times the per-call and per-session limits in guesses, spread so that no guesser is locked
    // out itself (each stays within its own allowance).
    let guesses = 0;
    for (let guesser = 0; guesser < 20; guesser++) {
      const ask = from(t, `198.51.100.${guesser + 1}`);
      for (let i = 0; i < FAILED_ATTEMPTS; i++) {
        const res =
          i % 2 === 0
            ? await ask(`/calls/public/${call.id}`, { 'X-Call-Key': `ck_guess${guesser}x${i}` })
            : await ask(`/chat/public/${session.id}`, { 'X-Chat-Key': `chk_guess${guesser}x${i}` });
        expect(res.status).toBe(401);
        guesses++;
      }
    }
    expect(guesses).toBeGreaterThan(PER_OBJECT_LIMIT * 8);
    // The rightful holders, each on its own address, still have their whole budget.
    const customer = await from(t, '203.0.113.10')(`/calls/public/${call.id}`, { 'X-Call-Key': call.customerKey });
    expect(customer.status).toBe(200);
    expect(customer.headers.get('x-ratelimit-remaining')).toBe(String(PER_OBJECT_LIMIT - 1));
    const chat = await from(t, '203.0.113.11')(`/chat/public/${session.id}`, { 'X-Chat-Key': session.chatKey });
    expect(chat.status).toBe(200);
    expect(chat.headers.get('x-ratelimit-remaining')).toBe(String(PER_OBJECT_LIMIT - 1));
    // A refused request reports no budget at all: it was never counted against one.
    const refused = await from(t, '203.0.113.12')(`/calls/public/${call.id}`, { 'X-Call-Key': 'ck_wrong' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('an address over the limit gets 429 unchecked on every guarded surface, even with valid credentials', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const session = await newSession();
    const address = '198.51.100.200';
    const ask = from(t, address);
    // Every kind of failure counts: unknown call (404), wrong call key (401), unknown session (404),
    // wrong chat key (401), wrong admin token (401).
    const failures = [
      await ask(`/calls/public/call_doesnotexist00000`, { 'X-Call-Key': call.customerKey }),
      await ask(`/calls/public/${call.id}/me`, { 'X-Call-Key': 'ck_wrong' }, { method: 'POST', body: { name: 'x' } }),
      await ask(`/chat/public/ses_doesnotexist000000/messages`, { 'X-Chat-Key': session.chatKey }),
      await ask(`/chat/public/${session.id}/messages`, { 'X-Chat-Key': 'chk_wrong' }, { method: 'POST', body: { text: 'hi' } }),
      await ask('/admin/orgs', { Authorization: 'Bearer adm_guess' }, { method: 'POST', body: { name: 'x' } }),
    ];
    expect(failures.map((res) => res.status)).toEqual([404, 401, 404, 401, 401]);

    // Now nothing from this address is even checked.
    await expectLockedOut(await ask(`/calls/public/${call.id}`, { 'X-Call-Key': call.customerKey }));
    await expectLockedOut(await ask(`/chat/public/${session.id}`, { 'X-Chat-Key': session.chatKey }));
    await expectLockedOut(await ask('/admin/orgs', { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, { method: 'POST', body: { name: 'x' } }));
    const join = await calls.join(call.id, call.customerKey);
    const upgrade = await upgradeFrom(streamUrl(t, join), address);
    expect(upgrade.status).toBe(429);
    expect(Number(upgrade.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(upgrade.detail).toMatch(/^too many failed attempts from your address/);

    // Other addresses are untouched, and the lock-outs spent nobody's budget.
    const other = from(t, '198.51.100.201');
    const customer = await other(`/calls/public/${call.id}`, { 'X-Call-Key': call.customerKey });
    expect(customer.status).toBe(200);
    // Two successful requests so far on this call: join() above and this one.
    expect(customer.headers.get('x-ratelimit-remaining')).toBe(String(PER_OBJECT_LIMIT - 2));
    expect((await other('/admin/orgs', { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, { method: 'POST', body: { name: 'y' } })).status).toBe(201);
    expect((await upgradeFrom(streamUrl(t, join), '198.51.100.201')).status).toBe(101);
  });

  it('counts only refusals: successful requests and other errors do not use up the allowance', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const ask = from(t, '198.51.100.150');
    for (let i = 0; i < FAILED_ATTEMPTS * 2; i++) {
      expect((await ask('/admin/orgs', { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, { method: 'POST', body: { name: `ok ${i}` } })).status).toBe(201);
    }
    // A valid key with an invalid body is the holder's mistake, not a guess (422, not counted).
    for (let i = 0; i < FAILED_ATTEMPTS * 2; i++) {
      expect((await ask('/admin/orgs', { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, { method: 'POST', body: {} })).status).toBe(422);
    }
    for (let i = 0; i < FAILED_ATTEMPTS; i++) {
      expect((await ask(`/calls/public/${call.id}`, { 'X-Call-Key': `ck_wrong${i}` })).status).toBe(401);
    }
    await expectLockedOut(await ask(`/calls/public/${call.id}`, { 'X-Call-Key': `ck_wrong` }));
  });

  it('media upgrades with a wrong token or unlock, or to an unknown channel, count; beyond the limit: 429 before any check', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const join = await calls.join(call.id, call.customerKey);
    const address = '198.51.100.77';
    const base = t.url.replace(/^http/, 'ws');
    const refusals = [
      await upgradeFrom(`${base}${join.stream!.path}?token=wrong`, address),
      await upgradeFrom(`${base}${join.listen!.path}?unlock=wrong`, address),
      await upgradeFrom(`${base}/media/stream/ch_doesnotexist000000_a?token=x`, address),
      await upgradeFrom(`${base}/media/listen/not-a-channel?unlock=x`, address),
      await upgradeFrom(`${base}${join.stream!.path}`, address),
    ];
    expect(refusals.map((r) => r.status)).toEqual([401, 401, 404, 404, 401]);
    const locked = await upgradeFrom(streamUrl(t, join), address);
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(locked.retryAfter)).toBeLessThanOrEqual(60);
  });

  it('unknown AudioSocket line ids count per PBX address; beyond the limit the PBX is refused unchecked (0x15)', async () => {
    const port = t.server.ports.audiosocket!;
    const refusedWith = async (lineId: string) => {
      const pbx = await Pbx.connect(port);
      pbx.sendUuid(lineId);
      await pbx.ended;
      return pbx.messages.map((m) => [m.kind, ...m.payload]);
    };
    for (let i = 0; i < FAILED_ATTEMPTS; i++) expect(await refusedWith(randomUUID())).toEqual([[0xff, LINE_ERROR.unknownLine]]);

    // Even the right line id is not looked at now.
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const line = await (await calls.api(`/v1/calls/${call.id}/phone-line`, key, { method: 'POST', body: { side: 'customer' } })).json();
    expect(await refusedWith(line.audiosocket_id)).toEqual([[0xff, LINE_ERROR.tooManyFailedAttempts]]);
  });
});

describe(`without TRUST_PROXY a client cannot pick its own address (${backendName})`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ FAILED_ATTEMPTS_PER_MINUTE: '3' });
  });
  afterAll(() => t?.stop());

  it('ignores X-Forwarded-For: rotating it does not dodge the limit', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await from(t, `192.0.2.${i + 1}`)('/admin/orgs', { Authorization: 'Bearer adm_guess' }, { method: 'POST', body: { name: 'x' } });
      expect(res.status).toBe(401);
    }
    await expectLockedOut(await from(t, '192.0.2.99')('/admin/orgs', { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, { method: 'POST', body: { name: 'x' } }));
  });
});
