// What browsers are told: CORS on the public call and chat endpoints (docs/api-behaviour.md), nosniff on every
// answer, a Content-Security-Policy on every HTML page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`browser-facing headers (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  beforeAll(async () => {
    t = await startTestServer();
    key = (await t.createKey(await t.createOrg(), 'test')).key;
  });
  afterAll(() => t?.stop());

  const preflight = (path: string, method: string, headers: string) =>
    fetch(`${t.url}${path}`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers },
    });

  it.each([
    ['/calls/public/call_8ZpQ2mW4xYt7LkVn', 'GET', 'x-call-key'],
    ['/calls/public/call_8ZpQ2mW4xYt7LkVn/me', 'POST', 'content-type,x-call-key'],
    ['/chat/public/ses_5tRk8Wq2NmX7cV4b/messages', 'POST', 'content-type,x-chat-key'],
    ['/chat/public/ses_5tRk8Wq2NmX7cV4b/stream', 'GET', 'last-event-id,x-chat-key'],
    ['/chat/public/any/path/at/all', 'GET', 'x-chat-key'],
  ])('answers the preflight of %s with 204, any origin, the methods and headers, no credentials', async (path, method, headers) => {
    const res = await preflight(path, method, headers);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')!.split(/,\s*/)).toEqual(expect.arrayContaining(['GET', 'POST', 'OPTIONS']));
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['x-call-key', 'x-chat-key', 'content-type', 'last-event-id']));
    expect(allowed).toEqual(expect.arrayContaining(headers.split(',')));
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
  });

  it('answers every GET in full, as the contract documents: no ETag, and If-None-Match changes nothing', async () => {
    const account = () => fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}`, 'If-None-Match': '*' } });
    const first = await account();
    expect(first.status).toBe(200);
    expect(first.headers.get('etag')).toBeNull();
    expect((await first.json()).mode).toBe('test');
    expect((await account()).status).toBe(200);
  });

  it('lets any origin read the real answers of the public endpoints, errors included', async () => {
    const call = await (
      await fetch(`${t.url}/v1/calls`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ agent_language: 'en', customer_language: 'fi' }),
      })
    ).json();
    const callKey = call.customer_url.split('#k=')[1];
    const origin = { Origin: 'https://shop.example' };
    const answers = [
      await fetch(`${t.url}/calls/public/${call.id}`, { headers: { ...origin, 'X-Call-Key': callKey } }),
      await fetch(`${t.url}/calls/public/${call.id}`, { headers: { ...origin, 'X-Call-Key': 'ck_wrong' } }),
      await fetch(`${t.url}/calls/public/call_unknown`, { headers: { ...origin, 'X-Call-Key': callKey } }),
      await fetch(`${t.url}/chat/public/ses_unknown/nowhere`, { headers: origin }),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 401, 404, 404]);
    for (const res of answers) {
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('access-control-expose-headers')!.toLowerCase()).toContain('retry-after');
    }
  });

  it('keeps CORS off the API-key and admin endpoints', async () => {
    const res = await fetch(`${t.url}/v1/account`, { headers: { Origin: 'https://shop.example', Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const options = await preflight('/v1/account', 'GET', 'authorization');
    expect(options.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('says nosniff on every answer: JSON, errors, the contract, pages and assets', async () => {
    for (const path of ['/healthz', '/v1/account', '/no/such/path', '/openapi.json', '/docs', '/chat/ses_x', '/chat-assets/chat.js']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
  });

  it('gives HTML pages a Content-Security-Policy: the chat page may be framed by any site, /docs only by its own', async () => {
    const chat = await fetch(`${t.url}/chat/ses_5tRk8Wq2NmX7cV4b`);
    expect(chat.headers.get('content-type')).toMatch(/^text\/html/);
    const chatPolicy = chat.headers.get('content-security-policy')!;
    expect(chatPolicy).toMatch(/(^|; )default-src 'self'(;|$)/);
    expect(chatPolicy).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(chatPolicy).toMatch(/(^|; )frame-ancestors \*(;|$)/);
    expect(chat.headers.get('x-frame-options')).toBeNull();

    const docs = await fetch(`${t.url}/docs`);
    const docsPolicy = docs.headers.get('content-security-policy')!;
    expect(docsPolicy).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(docsPolicy).toMatch(/(^|; )frame-ancestors 'self'(;|$)/);
    expect(docs.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    for (const policy of [chatPolicy, docsPolicy]) expect(policy).not.toMatch(/unsafe-inline|unsafe-eval/);
  });
});
