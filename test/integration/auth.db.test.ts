import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../src/auth/principal.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`authentication and the account (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  let liveKey: string;
  let testKey: string;

  beforeAll(async () => {
    t = await startTestServer();
    orgId = await t.createOrg({ name: 'Acme', balance: 12.345678, currency: 'usd', text_rate_per_million_characters: 15.5 });
    liveKey = (await t.createKey(orgId, 'live')).key;
    testKey = (await t.createKey(orgId, 'test')).key;
  });
  afterAll(() => t?.stop());

  const get = (headers: Record<string, string>) => fetch(`${t.url}/v1/account`, { headers });

  it('answers GET /v1/account for a live key sent as Bearer', async () => {
    const res = await get({ Authorization: `Bearer ${liveKey}` });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      org_id: orgId,
      org_name: 'Acme',
      currency: 'USD',
      balance: 12.345678,
      mode: 'live',
      scopes: [...ALL_SCOPES],
      text_rate_per_million_characters: 15.5,
      voice_rate_per_minute: 0.1,
    });
  });

  it('accepts a key in X-Api-Key and reports its test mode', async () => {
    const res = await get({ 'X-Api-Key': testKey });
    expect(res.status).toBe(200);
    expect((await res.json()).mode).toBe('test');
  });

  it('keys look as the document says and are stored only as hashes', async () => {
    expect(liveKey).toMatch(/^spk_live_[0-9A-Za-z]{32,}$/);
    expect(testKey).toMatch(/^spk_test_[0-9A-Za-z]{32,}$/);
    const rows = await t.server.app.db('api_keys').select('*');
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(liveKey);
    expect(stored).not.toContain(testKey);
  });

  it.each([
    ['no credentials', {}],
    ['an unknown key', { Authorization: 'Bearer spk_live_0000000000000000000000000000000000000000' }],
    ['a malformed key', { 'X-Api-Key': 'hello' }],
    ['an empty bearer', { Authorization: 'Bearer ' }],
    ['another scheme', { Authorization: 'Basic abc' }],
  ])('refuses %s with 401 and a JSON detail', async (_name, headers) => {
    const res = await get(headers as Record<string, string>);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(typeof (await res.json()).detail).toBe('string');
  });

  it('stops a revoked key at once', async () => {
    const { id, key } = await t.createKey(orgId, 'live');
    expect((await get({ Authorization: `Bearer ${key}` })).status).toBe(200);
    const revoke = await t.admin.DELETE('/admin/keys/{key_id}', { params: { path: { key_id: id } } });
    expect(revoke.response.status).toBe(204);
    expect((await get({ Authorization: `Bearer ${key}` })).status).toBe(401);
  });

  it('refuses a key without the scope with 403 naming it', async () => {
    const { key } = await t.createKey(orgId, 'live', ['translate']);
    const res = await get({ Authorization: `Bearer ${key}` });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ detail: 'missing scope: account:read' });

    const calls = await fetch(`${t.url}/v1/calls`, { headers: { Authorization: `Bearer ${key}` } });
    expect(calls.status).toBe(403);
    expect((await calls.json()).detail).toBe('missing scope: calls:read');
  });

  it('checks the scope before the body', async () => {
    const { key } = await t.createKey(orgId, 'live', ['account:read']);
    const res = await fetch(`${t.url}/v1/translate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(403);
    expect((await res.json()).detail).toBe('missing scope: translate');
  });

  it('reports the balance of an invoiced organization as null', async () => {
    const invoiced = await t.createOrg({ name: 'Invoiced', balance: null });
    const { key } = await t.createKey(invoiced, 'live');
    const res = await get({ Authorization: `Bearer ${key}` });
    expect((await res.json()).balance).toBeNull();
  });
});
