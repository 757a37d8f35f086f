// API keys in the console: a name, the last four characters, who made them and when they were last
// used; rolling a key makes a new one and keeps the old one working for the overlap chosen (none, 1 h,
// 24 h, 7 days), then refuses it. The credential cache is off, so a key's end applies to the next request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { addMember, csrfOf, PASSWORD, visitor, type Visitor } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const NEW_KEY = /<code id="new-key" class="key">([^<]+)<\/code>/;

describe(`console keys: names and rolls (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  let member: Visitor;
  let csrf: string;
  beforeAll(async () => {
    t = await startTestServer({ CREDENTIAL_CACHE_TTL_MS: '0' });
    orgId = await t.createOrg({ name: 'Keys Org' });
    await addMember(t, orgId, 'maker@keys.example');
    member = visitor(t);
    expect((await member.signIn('maker@keys.example', PASSWORD)).status).toBe(303);
    csrf = csrfOf(await (await member.get('/console/keys')).text());
  });
  afterAll(() => t?.stop());

  const works = async (key: string) => (await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } })).status;
  const createKey = async (name: string) => {
    const page = await member.follow(await member.post('/console/keys', { csrf_token: csrf, mode: 'test', scopes: 'account:read', name }));
    return NEW_KEY.exec(await page.text())![1]!;
  };
  const rowOf = async (keyId: string) => (await t.server.app.db('api_keys').where({ id: keyId }).first())!;
  const roll = (keyId: string, seconds: number | string) => member.post(`/console/keys/${keyId}/roll`, { csrf_token: csrf, overlap_seconds: String(seconds) });

  it('lists a key by its name, last four characters, maker and last use', async () => {
    const key = await createKey('Helpdesk <sync>');
    expect(await works(key)).toBe(200);
    const row = await t.server.app.db('api_keys').where({ org_id: orgId, name: 'Helpdesk <sync>' }).first();
    expect(row).toMatchObject({ last_four: key.slice(-4), created_by: 'maker@keys.example', expires_at: null });
    await t.server.app.db('api_keys').where({ id: row.id }).update({ last_used_at: new Date('2026-11-20T08:30:00Z') });
    const html = await (await member.get('/console/keys')).text();
    expect(html).toContain('<strong>Helpdesk &lt;sync&gt;</strong>');
    expect(html).toContain(`<code class="muted">…${key.slice(-4)}</code>`);
    expect(html).toContain('by maker@keys.example');
    expect(html).toContain('<time datetime="2026-11-20T08:30:00.000Z">');
    expect(html).not.toContain(key);
  });

  it('rolls with an overlap: both keys work until it ends, then only the new one; a rolled key cannot be rolled again', async () => {
    const old = await createKey('Rolled');
    const oldId = (await t.server.app.db('api_keys').where({ name: 'Rolled' }).first()).id;
    const rolled = await roll(oldId, 3600);
    expect(rolled.status).toBe(303);
    const page = await (await member.follow(rolled)).text();
    const fresh = NEW_KEY.exec(page)![1]!;
    expect(page).toContain(`replaces ${oldId}; ${oldId} keeps working until`);
    expect(fresh).not.toBe(old);
    const oldRow = await rowOf(oldId);
    expect(new Date(oldRow.expires_at).getTime() - Date.now()).toBeGreaterThan(3590_000);
    expect(new Date(oldRow.expires_at).getTime() - Date.now()).toBeLessThanOrEqual(3600_000);
    const newRow = await rowOf(oldRow.replaced_by);
    expect(newRow).toMatchObject({ name: 'Rolled', scopes: ['account:read'], mode: 'test', expires_at: null, last_four: fresh.slice(-4) });
    expect(await works(old)).toBe(200);
    expect(await works(fresh)).toBe(200);
    expect(await (await member.get('/console/keys')).text()).toContain('Works until');

    const again = await roll(oldId, 0);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('roll the key that replaced it');

    // The overlap over: the old key is refused, the new one goes on.
    await t.server.app.db('api_keys').where({ id: oldId }).update({ expires_at: new Date(Date.now() - 1000) });
    expect(await works(old)).toBe(401);
    expect(await works(fresh)).toBe(200);
    expect(await (await member.get('/console/keys')).text()).toContain('Expired');
  });

  it('rolls without an overlap (the old key revoked at once), refuses other overlaps and other organizations, and viewers', async () => {
    const old = await createKey('Now');
    const oldId = (await t.server.app.db('api_keys').where({ name: 'Now' }).first()).id;
    expect((await roll(oldId, 60)).status).toBe(400);
    expect((await roll(oldId, 'soon')).status).toBe(400);
    expect(await works(old)).toBe(200);
    expect((await roll(oldId, 0)).status).toBe(303);
    expect(await works(old)).toBe(401);
    expect((await rowOf(oldId)).revoked_at).not.toBeNull();

    const other = await t.createOrg();
    const theirs = await t.createKey(other, 'test');
    expect((await roll(theirs.id, 3600)).status).toBe(404);
    expect(await t.server.app.db('api_keys').where({ org_id: other })).toHaveLength(1);

    await addMember(t, orgId, 'watcher@keys.example', PASSWORD, 'viewer');
    const viewer = visitor(t);
    await viewer.signIn('watcher@keys.example', PASSWORD);
    const page = await (await viewer.get('/console/keys')).text();
    expect(page).not.toContain('Roll…');
    const newest = await t.server.app.db('api_keys').where({ org_id: orgId }).whereNull('revoked_at').whereNull('expires_at').first();
    expect((await viewer.post(`/console/keys/${newest.id}/roll`, { csrf_token: csrfOf(page), overlap_seconds: '3600' })).status).toBe(403);
  });
});
