import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';
import { findTelephonyConnector, sealPlaintextTokens } from '../../src/telephony/connectors.js';

describe(`admin API (${backendName})`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  const post = (path: string, body: unknown, token = TEST_ADMIN_TOKEN) =>
    fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('creates an organization with the documented defaults', async () => {
    const res = await post('/admin/orgs', { name: 'Defaults' });
    expect(res.status).toBe(201);
    const org = await res.json();
    expect(org).toEqual({
      org_id: expect.stringMatching(/^org_[0-9A-Za-z]{16}$/),
      org_name: 'Defaults',
      currency: 'EUR',
      balance: 0,
      text_rate_per_million_characters: 20,
      voice_rate_per_minute: 0.1,
      transcripts: true,
    });
  });

  const patch = (path: string, body: string, token = TEST_ADMIN_TOKEN) =>
    fetch(`${t.url}${path}`, { method: 'PATCH', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body });
  const get = async (path: string) => (await fetch(`${t.url}${path}`, { headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).json();

  it("turns an organization's transcripts off and on: every answer carrying the organization says so", async () => {
    const created = await post('/admin/orgs', { name: 'Quiet', transcripts: false });
    expect(created.status).toBe(201);
    const orgId = (await created.json()).org_id;
    expect(await get(`/admin/orgs/${orgId}`)).toMatchObject({ org_id: orgId, transcripts: false });
    const on = await patch(`/admin/orgs/${orgId}`, JSON.stringify({ transcripts: true }));
    expect(on.status).toBe(200);
    expect(await on.json()).toEqual({ org_id: orgId, org_name: 'Quiet', currency: 'EUR', balance: 0, text_rate_per_million_characters: 20, voice_rate_per_minute: 0.1, transcripts: true });
    const off = await patch(`/admin/orgs/${orgId}`, JSON.stringify({ transcripts: false }));
    expect(await off.json()).toMatchObject({ transcripts: false });
    expect(await get(`/admin/orgs/${orgId}`)).toMatchObject({ transcripts: false });
    expect((await get('/admin/orgs?limit=100')).find((org: { org_id: string }) => org.org_id === orgId)).toMatchObject({ transcripts: false });
    expect(await (await post(`/admin/orgs/${orgId}/credit`, { amount: 1 })).json()).toMatchObject({ balance: 1, transcripts: false });
    // The API key's own view of its organization (the seed's account) is unchanged.
    const { key } = await t.createKey(orgId, 'test');
    const account = await (await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } })).json();
    expect(account).not.toHaveProperty('transcripts');
  });

  it('refuses a bad settings change: 422 for a bad body, 404 for an unknown organization, 401 without the admin token', async () => {
    const orgId = await t.createOrg();
    for (const body of ['{}', '{"transcripts":"no"}', '{"transcripts":null}', '{"transcripts":false,"name":"Renamed"}', '[]', '"off"']) {
      const res = await patch(`/admin/orgs/${orgId}`, body);
      expect(res.status, body).toBe(422);
      expect(Array.isArray((await res.json()).detail), body).toBe(true);
    }
    expect((await patch(`/admin/orgs/${orgId}`, '{"transcripts":')).status).toBe(422);
    expect((await patch('/admin/orgs/org_nope', '{"transcripts":false}')).status).toBe(404);
    expect((await patch(`/admin/orgs/${orgId}`, '{"transcripts":false}', 'wrong-token-wrong-token')).status).toBe(401);
    expect(await get(`/admin/orgs/${orgId}`)).toMatchObject({ transcripts: true });
  });

  it('refuses a wrong or missing admin token with 401', async () => {
    expect((await post('/admin/orgs', { name: 'x' }, 'wrong-token-wrong-token')).status).toBe(401);
    const res = await fetch(`${t.url}/admin/orgs`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
  });

  it('does not accept an API key as admin token', async () => {
    const orgId = await t.createOrg();
    const { key } = await t.createKey(orgId, 'live');
    expect((await post('/admin/orgs', { name: 'x' }, key)).status).toBe(401);
  });

  it('lists every problem of an invalid body with 422', async () => {
    const res = await post('/admin/orgs', { currency: 'euros', balance: 'lots', voice_rate_per_minute: -1 });
    expect(res.status).toBe(422);
    const { detail } = await res.json();
    const locs = detail.map((d: { loc: string[] }) => d.loc.join('.'));
    expect(locs).toEqual(
      expect.arrayContaining(['body.name', 'body.currency', 'body.balance', 'body.voice_rate_per_minute']),
    );
    for (const item of detail) {
      expect(typeof item.msg).toBe('string');
      expect(typeof item.type).toBe('string');
    }
  });

  it('creates keys with chosen scopes, in canonical order, and 404 for an unknown organization', async () => {
    const orgId = await t.createOrg();
    const res = await post(`/admin/orgs/${orgId}/keys`, { mode: 'test', scopes: ['translate', 'account:read', 'translate'] });
    expect(res.status).toBe(201);
    const key = await res.json();
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^spk_test_/),
      mode: 'test',
      scopes: ['translate', 'account:read'],
      created_at: expect.any(String),
    });
    expect((await post('/admin/orgs/org_nope/keys', { mode: 'live' })).status).toBe(404);
    expect((await post(`/admin/orgs/${orgId}/keys`, { mode: 'demo', scopes: ['everything'] })).status).toBe(422);
  });

  it('revoking an unknown key is 404', async () => {
    const res = await fetch(`${t.url}/admin/keys/key_nope`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(404);
  });

  it('credits a prepaid balance exactly and records each change in the ledger', async () => {
    const orgId = await t.createOrg({ balance: 0.1 });
    for (const amount of [0.2, 0.000001, -0.05]) {
      expect((await post(`/admin/orgs/${orgId}/credit`, { amount })).status).toBe(200);
    }
    const res = await post(`/admin/orgs/${orgId}/credit`, { amount: 1 });
    expect((await res.json()).balance).toBe(1.250001);
    const ledger = await t.server.app.db('ledger_entries').where({ org_id: orgId }).orderBy('id');
    expect(ledger.map((row) => row.amount_micros)).toEqual([100000, 200000, 1, -50000, 1000000]);
    const org = await t.server.app.db('organizations').where({ id: orgId }).first();
    expect(org.balance_micros).toBe(ledger.reduce((sum, row) => sum + row.amount_micros, 0));
  });

  it('refuses to credit an invoiced organization with 409', async () => {
    const orgId = await t.createOrg({ balance: null });
    expect((await post(`/admin/orgs/${orgId}/credit`, { amount: 5 })).status).toBe(409);
    expect((await post('/admin/orgs/org_nope/credit', { amount: 5 })).status).toBe(404);
  });

  it('stores the telephony connector without echoing its secret', async () => {
    const orgId = await t.createOrg();
    const body = { account_sid: 'AC123', auth_token: 'super-secret-token', from_number: '+15005550006' };
    const res = await fetch(`${t.url}/admin/orgs/${orgId}/telephony`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain('super-secret-token');
    expect(JSON.parse(text)).toEqual({ org_id: orgId, account_sid: 'AC123', from_number: '+15005550006', configured: true });
    // Stored sealed: no plaintext column, and the sealed text is not the token.
    const row = await t.server.app.db('telephony_connectors').where({ org_id: orgId }).first();
    expect(row.auth_token).toBeNull();
    expect(row.auth_token_sealed).not.toContain('super-secret-token');
    expect(await findTelephonyConnector(t.server.app.db, t.server.app.secretsKey, orgId)).toEqual(body);
  });

  it('seals auth tokens stored in plaintext before tokens were sealed (the start-up half of the migration)', async () => {
    const orgId = await t.createOrg();
    const { db, secretsKey } = t.server.app;
    await db('telephony_connectors').insert({ org_id: orgId, account_sid: 'AC_old', auth_token: 'old-plain-token', from_number: '+15005550009' });
    expect(await sealPlaintextTokens(db, secretsKey)).toBeGreaterThanOrEqual(1);
    const row = await db('telephony_connectors').where({ org_id: orgId }).first();
    expect(row.auth_token).toBeNull();
    expect(row.auth_token_sealed).not.toContain('old-plain-token');
    expect((await findTelephonyConnector(db, secretsKey, orgId))!.auth_token).toBe('old-plain-token');
    expect(await sealPlaintextTokens(db, secretsKey)).toBe(0);
  });

  it("never writes another organization's connector: the organization comes from the path, unknown fields are refused", async () => {
    const victim = await t.createOrg({ name: 'Victim' });
    const attacker = await t.createOrg({ name: 'Attacker' });
    const put = (orgId: string, body: object) =>
      fetch(`${t.url}/admin/orgs/${orgId}/telephony`, {
        method: 'PUT',
        headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const victimConnector = { account_sid: 'AC_victim', auth_token: 'victim-token', from_number: '+15005550001' };
    expect((await put(victim, victimConnector)).status).toBe(200);

    const attackerConnector = { account_sid: 'AC_attacker', auth_token: 'attacker-token', from_number: '+15005550002' };
    const smuggled = await put(attacker, { ...attackerConnector, org_id: victim, updated_at: '2000-01-01T00:00:00Z', no_such_column: 'x' });
    expect(smuggled.status).toBe(422);
    expect((await smuggled.json()).detail.map((issue: { loc: string[]; type: string }) => [issue.loc.join('.'), issue.type])).toEqual([
      ['body.org_id', 'unknown_field'],
      ['body.updated_at', 'unknown_field'],
      ['body.no_such_column', 'unknown_field'],
    ]);
    expect(await findTelephonyConnector(t.server.app.db, t.server.app.secretsKey, victim)).toEqual(victimConnector);

    const res = await put(attacker, attackerConnector);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ org_id: attacker, account_sid: 'AC_attacker', from_number: '+15005550002', configured: true });

    const rows = await t.server.app.db('telephony_connectors').whereIn('org_id', [victim, attacker]).orderBy('account_sid');
    expect(rows.map(({ org_id }) => org_id)).toEqual([attacker, victim]);
    const { db, secretsKey } = t.server.app;
    expect(await findTelephonyConnector(db, secretsKey, attacker)).toEqual({
      account_sid: 'AC_attacker',
      auth_token: 'attacker-token',
      from_number: '+15005550002',
    });
    expect(await findTelephonyConnector(db, secretsKey, victim)).toEqual(victimConnector);
    expect(new Date(rows[0].updated_at).getFullYear()).toBeGreaterThan(2000);
  });
});
