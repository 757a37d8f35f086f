// The admin API's members and read side: adding members (the password never echoed nor logged), and
// organizations, keys (without secrets, with last_used_at) and the ledger for operators.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

describe(`admin API: members and the read side (${backendName})`, () => {
  const lines: string[] = [];
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({}, { logLevel: 'trace', logDestination: { write: (line: string) => lines.push(line) } });
  });
  afterAll(() => t?.stop());

  const admin = (method: string, path: string, body?: unknown, token = TEST_ADMIN_TOKEN) =>
    fetch(`${t.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  describe('POST /admin/orgs/{org_id}/members', () => {
    const password = 'Tr0ub4dor&3-members-secret';

    it('adds a member (201), lower-cases the email, defaults the role to admin, never echoes or logs the password', async () => {
      const orgId = await t.createOrg({ name: 'Members Org' });
      const res = await admin('POST', `/admin/orgs/${orgId}/members`, { email: 'Ada.Lovelace@Example.com', password });
      expect(res.status).toBe(201);
      const text = await res.text();
      expect(text).not.toContain(password);
      expect(JSON.parse(text)).toEqual({
        id: expect.stringMatching(/^mem_[0-9A-Za-z]{16}$/),
        email: 'ada.lovelace@example.com',
        role: 'admin',
        created_at: expect.any(String),
        disabled_at: null,
      });
      const owner = await admin('POST', `/admin/orgs/${orgId}/members`, { email: 'owner@example.com', password, role: 'owner' });
      expect(owner.status).toBe(201);
      expect((await owner.json()).role).toBe('owner');

      // Stored as an argon2id hash, never as the password.
      const row = await t.server.app.db('members').where({ email: 'ada.lovelace@example.com' }).first();
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      expect(row.password_hash).not.toContain(password);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join('\n')).not.toContain(password);
    });

    it('answers 409 for an email already a member of that organization (any case), but not of another', async () => {
      const orgId = await t.createOrg();
      const other = await t.createOrg();
      expect((await admin('POST', `/admin/orgs/${orgId}/members`, { email: 'twice@example.com', password })).status).toBe(201);
      const again = await admin('POST', `/admin/orgs/${orgId}/members`, { email: 'TWICE@example.com', password: 'another-password-1' });
      expect(again.status).toBe(409);
      expect((await again.json()).detail).toMatch(/already/);
      expect((await admin('POST', `/admin/orgs/${other}/members`, { email: 'twice@example.com', password })).status).toBe(201);
    });

    it('refuses a short password, a missing or invalid email and an unknown role with 422 naming each, without echoing the password', async () => {
      const orgId = await t.createOrg();
      const short = await admin('POST', `/admin/orgs/${orgId}/members`, { email: 'short@example.com', password: 'elevenchars' });
      expect(short.status).toBe(422);
      const shortText = await short.text();
      expect(shortText).not.toContain('elevenchars');
      expect(JSON.parse(shortText).detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual(['body.password']);

      const bad = await admin('POST', `/admin/orgs/${orgId}/members`, { email: 'not an email', role: 'root' });
      expect(bad.status).toBe(422);
      const locs = (await bad.json()).detail.map((d: { loc: string[] }) => d.loc.join('.'));
      expect(locs).toEqual(expect.arrayContaining(['body.email', 'body.password', 'body.role']));
    });

    it('answers 401 without the admin token and 404 for an unknown organization', async () => {
      const orgId = await t.createOrg();
      const res = await fetch(`${t.url}/admin/orgs/${orgId}/members`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'x@example.com', password }),
      });
      expect(res.status).toBe(401);
      expect((await admin('POST', `/admin/orgs/${orgId}/members`, { email: 'x@example.com', password }, 'adm_wrong_token_wrong_token')).status).toBe(401);
      expect((await admin('POST', '/admin/orgs/org_nope/members', { email: 'x@example.com', password })).status).toBe(404);
    });
  });

  describe('read side', () => {
    it('GET /admin/orgs lists organizations newest first, a page at a time', async () => {
      const ids: string[] = [];
      for (const name of ['Page A', 'Page B', 'Page C']) ids.push(await t.createOrg({ name }));
      const first = await admin('GET', '/admin/orgs?limit=2');
      expect(first.status).toBe(200);
      const page1 = await first.json();
      expect(page1.map((o: { org_id: string }) => o.org_id)).toEqual([ids[2], ids[1]]);
      const page2 = await (await admin('GET', `/admin/orgs?limit=2&before=${ids[1]}`)).json();
      expect(page2[0].org_id).toBe(ids[0]);
      expect((await admin('GET', '/admin/orgs?before=org_unknown')).status).toBe(404);
      expect((await admin('GET', '/admin/orgs?limit=0')).status).toBe(422);
      expect((await fetch(`${t.url}/admin/orgs`)).status).toBe(401);
    });

    it('GET /admin/orgs/{org_id} answers the organization, 404 when unknown', async () => {
      const orgId = await t.createOrg({ name: 'Single', balance: 12.5 });
      const res = await admin('GET', `/admin/orgs/${orgId}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ org_id: orgId, org_name: 'Single', balance: 12.5, currency: 'EUR' });
      expect((await admin('GET', '/admin/orgs/org_unknown')).status).toBe(404);
      expect((await fetch(`${t.url}/admin/orgs/${orgId}`)).status).toBe(401);
    });

    it('GET /admin/orgs/{org_id}/keys lists keys without secrets, with revoked_at and last_used_at', async () => {
      const orgId = await t.createOrg();
      const used = await t.createKey(orgId, 'test', ['account:read']);
      const unused = await t.createKey(orgId, 'live');
      expect((await admin('DELETE', `/admin/keys/${unused.id}`)).status).toBe(204);
      expect((await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${used.key}` } })).status).toBe(200);
      // The write is not awaited by the request: wait for it.
      await expect
        .poll(async () => (await t.server.app.db('api_keys').where({ id: used.id }).first('last_used_at')).last_used_at, { timeout: 60_000 })
        .not.toBeNull();

      const res = await admin('GET', `/admin/orgs/${orgId}/keys`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain(used.key);
      expect(text).not.toContain('hash');
      const keys = JSON.parse(text);
      // Made through the admin API: no name, nobody in the console made them, no end but revocation.
      const unlabelled = { name: null, created_by: null, expires_at: null };
      expect(keys).toEqual([
        { ...unlabelled, id: unused.id, mode: 'live', scopes: expect.any(Array), created_at: expect.any(String), revoked_at: expect.any(String), last_used_at: null, last_four: unused.key.slice(-4) },
        { ...unlabelled, id: used.id, mode: 'test', scopes: ['account:read'], created_at: expect.any(String), revoked_at: null, last_used_at: expect.any(String), last_four: used.key.slice(-4) },
      ]);
      expect((await admin('GET', '/admin/orgs/org_unknown/keys')).status).toBe(404);
      expect((await fetch(`${t.url}/admin/orgs/${orgId}/keys`)).status).toBe(401);
    });

    it('writes last_used_at at most once a minute per key, without a statement on every request', async () => {
      const orgId = await t.createOrg();
      const { id, key } = await t.createKey(orgId, 'test');
      const use = () => fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } });
      expect((await use()).status).toBe(200);
      await expect.poll(async () => (await t.server.app.db('api_keys').where({ id }).first('last_used_at')).last_used_at).not.toBeNull();
      const marker = new Date('2000-01-01T00:00:00Z');
      await t.server.app.db('api_keys').where({ id }).update({ last_used_at: marker });
      for (let i = 0; i < 3; i++) expect((await use()).status).toBe(200);
      // Within the minute, nothing is written again.
      expect((await t.server.app.db('api_keys').where({ id }).first('last_used_at')).last_used_at.toISOString()).toBe(marker.toISOString());
    });

    it('GET /admin/orgs/{org_id}/ledger lists rows newest first, a page at a time', async () => {
      const orgId = await t.createOrg({ balance: 10 });
      for (const amount of [1, 2, -0.5]) expect((await admin('POST', `/admin/orgs/${orgId}/credit`, { amount })).status).toBe(200);
      const res = await admin('GET', `/admin/orgs/${orgId}/ledger?limit=3`);
      expect(res.status).toBe(200);
      const rows = await res.json();
      expect(rows.map((r: { amount: number }) => r.amount)).toEqual([-0.5, 2, 1]);
      expect(rows[0]).toEqual({
        id: expect.any(Number),
        mode: 'live',
        kind: 'credit',
        quantity: 0,
        amount: -0.5,
        reference: 'admin credit',
        app_id: null,
        created_at: expect.any(String),
      });
      const rest = await (await admin('GET', `/admin/orgs/${orgId}/ledger?before=${rows[2].id}`)).json();
      expect(rest).toEqual([expect.objectContaining({ amount: 10, reference: 'opening balance' })]);
      expect(await (await admin('GET', `/admin/orgs/${orgId}/ledger?before=${rest[0].id}`)).json()).toEqual([]);
      expect((await admin('GET', '/admin/orgs/org_unknown/ledger')).status).toBe(404);
      expect((await fetch(`${t.url}/admin/orgs/${orgId}/ledger`)).status).toBe(401);
    });
  });
});
