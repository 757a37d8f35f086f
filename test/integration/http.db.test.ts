import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`HTTP surface (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  beforeAll(async () => {
    t = await startTestServer({ PUBLIC_BASE_URL: 'https://interpret.example.test' });
    key = (await t.createKey(await t.createOrg(), 'test')).key;
  });
  afterAll(() => t?.stop());

  const authed = (path: string, init: RequestInit = {}) =>
    fetch(`${t.url}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers } });

  it('serves liveness and readiness', async () => {
    expect(await (await fetch(`${t.url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${t.url}/readyz`)).json()).toEqual({ status: 'ok' });
  });

  it('serves the contract as JSON and YAML, the same document', async () => {
    const json = await (await fetch(`${t.url}/openapi.json`)).json();
    const yamlRes = await fetch(`${t.url}/openapi.yaml`);
    expect(yamlRes.headers.get('content-type')).toMatch(/yaml/);
    expect(YAML.parse(await yamlRes.text())).toEqual(json);
    expect(json.openapi).toBe('3.0.3');
    expect(json.paths['/v1/account'].get.operationId).toBe('getAccount');
  });

  it('names PUBLIC_BASE_URL as the server in the served contract, JSON and YAML', async () => {
    const servers = [{ url: 'https://interpret.example.test', description: 'This server' }];
    expect((await (await fetch(`${t.url}/openapi.json`)).json()).servers).toEqual(servers);
    expect(YAML.parse(await (await fetch(`${t.url}/openapi.yaml`)).text()).servers).toEqual(servers);
  });

  it('serves the reference page with local assets only', async () => {
    const page = await (await fetch(`${t.url}/docs`)).text();
    const assets = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset.startsWith('/')).toBe(true);
      expect((await fetch(`${t.url}${asset}`)).status).toBe(200);
    }
  });

  it('answers unknown paths with a JSON 404 and wrong methods with a JSON 405', async () => {
    const missing = await fetch(`${t.url}/nowhere`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).detail).toMatch(/no such endpoint/);
    const wrong = await authed('/v1/account', { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    expect(typeof (await wrong.json()).detail).toBe('string');
    // OPTIONS outside the public call and chat endpoints (which answer preflights) is a method like any other.
    const options = await authed('/v1/sessions/ses_any/messages', { method: 'OPTIONS' });
    expect(options.status).toBe(405);
    expect(options.headers.get('allow')!.split(', ').sort()).toEqual(['GET', 'POST']);
    expect(options.headers.get('content-type')).toMatch(/^application\/json/);
    // A path that is an operation's in other letters or with a trailing slash is that operation's.
    expect((await authed('/V1/Account/')).status).toBe(200);
  });

  it('answers a missing body or a body of another media type with 422, and lets an optional body be left out', async () => {
    const bare = (path: string, init: RequestInit = {}) =>
      fetch(`${t.url}${path}`, { method: 'POST', ...init, headers: { Authorization: `Bearer ${key}`, ...init.headers } });
    const missing = await bare('/v1/calls');
    expect(missing.status).toBe(422);
    expect((await missing.json()).detail).toEqual([{ loc: ['body'], msg: 'a request body is required (application/json)', type: 'missing' }]);
    const emptyJson = await bare('/v1/calls', { headers: { 'Content-Type': 'application/json' } });
    expect(emptyJson.status).toBe(422);
    expect((await emptyJson.json()).detail[0].type).toBe('missing');
    const text = await bare('/v1/calls', { headers: { 'Content-Type': 'text/plain' }, body: 'agent_language=en' });
    expect(text.status).toBe(422);
    expect((await text.json()).detail).toEqual([
      { loc: ['header', 'Content-Type'], msg: 'the body is text/plain; this operation takes application/json', type: 'unsupported_media_type' },
    ]);
    const jsonForUpload = await bare('/v1/sessions/ses_x/voice', { headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(jsonForUpload.status).toBe(422);
    expect((await jsonForUpload.json()).detail[0].msg).toMatch(/multipart\/form-data/);
    // phone-line's body is optional (side defaults to customer): no body at all is fine.
    const call = await (await authed('/v1/calls', { method: 'POST', body: JSON.stringify({ agent_language: 'en' }) })).json();
    const line = await bare(`/v1/calls/${call.id}/phone-line`);
    expect(line.status).toBe(200);
    expect((await line.json()).audiosocket_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('lists every problem of an invalid request with 422', async () => {
    const res = await authed('/v1/translate', {
      method: 'POST',
      body: JSON.stringify({ target: 'x', text: ['ok', 7], context: 'c'.repeat(501), glossary: 'no' }),
    });
    expect(res.status).toBe(422);
    const { detail } = await res.json();
    const locs = detail.map((d: { loc: Array<string | number> }) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.target', 'body.context', 'body.glossary']));
    expect(locs.some((loc: string) => loc.startsWith('body.text'))).toBe(true);
  });

  it('reports a value that matches none of its alternatives once, naming the broken rule or the types allowed', async () => {
    const res = await authed('/v1/calls', {
      method: 'POST',
      body: JSON.stringify({ agent_language: 'en', metadata: { nested: { x: 1 }, long: 'x'.repeat(501), fine: null } }),
    });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual([
      { loc: ['body', 'metadata', 'nested'], msg: 'must be string, number or boolean', type: 'type' },
      { loc: ['body', 'metadata', 'long'], msg: 'must NOT have more than 500 characters', type: 'maxLength' },
    ]);
    const items = await authed('/v1/translate', { method: 'POST', body: JSON.stringify({ target: 'fi', text: ['ok', 7] }) });
    expect((await items.json()).detail).toEqual([{ loc: ['body', 'text', 1], msg: 'must be string', type: 'type' }]);
  });

  it('rejects invalid query parameters with 422', async () => {
    const res = await authed('/v1/calls?limit=0&status=closed');
    expect(res.status).toBe(422);
    const locs = (await res.json()).detail.map((d: { loc: string[] }) => d.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['query.limit', 'query.status']));
  });

  it('answers malformed JSON with 422, not 500', async () => {
    const res = await authed('/v1/translate', { method: 'POST', body: '{"target": "fi",' });
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
  });

  it('answers a body over the size limit with 413', async () => {
    const res = await authed('/v1/translate', { method: 'POST', body: JSON.stringify({ target: 'fi', text: 'x'.repeat(2_000_000) }) });
    expect(res.status).toBe(413);
  });

  it('echoes a sane X-Request-Id and makes one otherwise', async () => {
    const echoed = await fetch(`${t.url}/healthz`, { headers: { 'X-Request-Id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const made = await fetch(`${t.url}/healthz`, { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
