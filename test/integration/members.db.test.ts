// Members and roles: the admin API (list, change role, disable, remove, password reset links), the last
// owner kept, sessions ended at once; in the console, roles checked on every form, invitations by a
// one-time link, a password change and signing out everywhere; every form answers 303 (a reload never
// repeats it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeStaleLinks } from '../../src/members/links.js';
import { backendName } from '../support/databases.js';
import { addMember, csrfOf, PASSWORD, visitor, type Visitor } from '../support/consoleVisitor.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

describe(`members and roles (${backendName})`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${t.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const signedIn = async (email: string, password = PASSWORD): Promise<{ member: Visitor; csrf: string }> => {
    const member = visitor(t);
    expect((await member.signIn(email, password)).status).toBe(303);
    return { member, csrf: csrfOf(await (await member.get('/console/account')).text()) };
  };
  /** Whether the visitor's session still opens the console (a page, not a redirect to sign in). */
  const opens = async (member: Visitor) => (await member.get('/console')).status === 200;
  const linkOf = (html: string) => /<code id="new-link" class="key">([^<]+)<\/code>/.exec(html)?.[1];

  describe('admin API', () => {
    it('lists members, changes a role, disables (sessions end at once, sign-in refused) and enables again', async () => {
      const orgId = await t.createOrg();
      const ownerId = await addMember(t, orgId, 'owner@roles.example', PASSWORD, 'owner');
      const adaId = await addMember(t, orgId, 'ada@roles.example');
      const listed = await admin('GET', `/admin/orgs/${orgId}/members`);
      expect(listed.status).toBe(200);
      expect(await listed.json()).toEqual([
        { id: ownerId, email: 'owner@roles.example', role: 'owner', created_at: expect.any(String), disabled_at: null },
        { id: adaId, email: 'ada@roles.example', role: 'admin', created_at: expect.any(String), disabled_at: null },
      ]);

      const { member: ada } = await signedIn('ada@roles.example');
      const viewer = await admin('PATCH', `/admin/orgs/${orgId}/members/${adaId}`, { role: 'viewer' });
      expect(viewer.status).toBe(200);
      expect((await viewer.json()).role).toBe('viewer');
      // The role is read on every request: the open session is a viewer's at once.
      const csrf = csrfOf(await (await ada.get('/console/keys')).text());
      const refused = await ada.post('/console/keys', { csrf_token: csrf, mode: 'test', scopes: 'translate' });
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('this needs the admin role or owner; you are a viewer');

      const disabled = await admin('PATCH', `/admin/orgs/${orgId}/members/${adaId}`, { disabled: true });
      expect(disabled.status).toBe(200);
      expect((await disabled.json()).disabled_at).toEqual(expect.any(String));
      expect(await opens(ada)).toBe(false);
      expect(await t.server.app.db('member_sessions').where({ member_id: adaId })).toEqual([]);
      expect((await visitor(t).signIn('ada@roles.example', PASSWORD)).status).toBe(401);

      expect((await (await admin('PATCH', `/admin/orgs/${orgId}/members/${adaId}`, { disabled: false })).json()).disabled_at).toBeNull();
      expect((await visitor(t).signIn('ada@roles.example', PASSWORD)).status).toBe(303);
    });

    it('keeps an active owner: the last one cannot be demoted, disabled or removed (409); with two, one may go', async () => {
      const orgId = await t.createOrg();
      const first = await addMember(t, orgId, 'first@owners.example', PASSWORD, 'owner');
      for (const [method, body] of [['PATCH', { role: 'admin' }], ['PATCH', { disabled: true }], ['DELETE', undefined]] as const) {
        const res = await admin(method, `/admin/orgs/${orgId}/members/${first}`, body);
        expect(res.status).toBe(409);
        expect((await res.json()).detail).toBe('the organization must keep an active owner: make another member owner first');
      }
      const second = await addMember(t, orgId, 'second@owners.example', PASSWORD, 'owner');
      expect((await admin('PATCH', `/admin/orgs/${orgId}/members/${first}`, { disabled: true })).status).toBe(200);
      // A disabled owner does not count: the other one is now the last.
      expect((await admin('DELETE', `/admin/orgs/${orgId}/members/${second}`)).status).toBe(409);
      expect((await admin('PATCH', `/admin/orgs/${orgId}/members/${first}`, { disabled: false })).status).toBe(200);
      const { member: gone } = await signedIn('second@owners.example');
      expect((await admin('DELETE', `/admin/orgs/${orgId}/members/${second}`)).status).toBe(204);
      expect(await opens(gone)).toBe(false);
      expect((await admin('DELETE', `/admin/orgs/${orgId}/members/${second}`)).status).toBe(404);
    });

    it.runIf(backendName === 'postgres')('demoting two owners at once leaves one of them owner', async () => {
      const orgId = await t.createOrg();
      const a = await addMember(t, orgId, 'a@race.example', PASSWORD, 'owner');
      const b = await addMember(t, orgId, 'b@race.example', PASSWORD, 'owner');
      const answers = await Promise.all([a, b].map((id) => admin('PATCH', `/admin/orgs/${orgId}/members/${id}`, { role: 'viewer' })));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(await t.server.app.db('members').where({ org_id: orgId, role: 'owner' })).toHaveLength(1);
    });

    it('answers 404 for an unknown organization or member, 422 for a bad body, and never mixes organizations', async () => {
      const orgId = await t.createOrg();
      const other = await t.createOrg();
      const theirs = await addMember(t, other, 'theirs@orgs.example', PASSWORD, 'owner');
      expect((await admin('PATCH', `/admin/orgs/${orgId}/members/${theirs}`, { role: 'viewer' })).status).toBe(404);
      expect((await admin('DELETE', `/admin/orgs/${orgId}/members/${theirs}`)).status).toBe(404);
      expect((await admin('POST', `/admin/orgs/${orgId}/members/${theirs}/password_reset`)).status).toBe(404);
      expect((await admin('GET', '/admin/orgs/org_unknown000000000/members')).status).toBe(404);
      const bad = await admin('PATCH', `/admin/orgs/${other}/members/${theirs}`, { role: 'root', hats: 1 });
      expect(bad.status).toBe(422);
      expect((await bad.json()).detail.map((d: { loc: string[] }) => d.loc.join('.'))).toEqual(expect.arrayContaining(['body.role', 'body.hats']));
      expect((await admin('PATCH', `/admin/orgs/${other}/members/${theirs}`, {})).status).toBe(422);
      expect((await admin('GET', `/admin/orgs/${other}/members`)).status).toBe(200);
    });

    it('makes a one-time password reset link (1 hour): the new password works, the old does not, sessions end, a second use is 410', async () => {
      const orgId = await t.createOrg({ name: 'Reset Org' });
      const id = await addMember(t, orgId, 'reset@links.example');
      const { member: before } = await signedIn('reset@links.example');
      const res = await admin('POST', `/admin/orgs/${orgId}/members/${id}/password_reset`);
      expect(res.status).toBe(201);
      const { url, expires_at } = await res.json();
      expect(url).toMatch(/^https?:\/\/[^/]+\/console\/link\/cml_[0-9A-Za-z]{40}$/);
      expect(new Date(expires_at).getTime() - Date.now()).toBeGreaterThan(59 * 60_000);
      expect(new Date(expires_at).getTime() - Date.now()).toBeLessThanOrEqual(60 * 60_000);
      // Only the hash is stored.
      expect(JSON.stringify(await t.server.app.db('member_links'))).not.toContain(url.split('/').pop());

      const path = new URL(url).pathname;
      const someone = visitor(t);
      const page = await someone.get(path);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('Choose a new password');
      expect(html).toContain('reset@links.example');
      expect((await someone.post(path, { new_password: 'short' })).status).toBe(422);
      expect((await someone.post(path, { new_password: 'a-new-password-long' }, { Origin: 'https://evil.example' })).status).toBe(403);
      const used = await someone.post(path, { new_password: 'a-new-password-long' });
      expect(used.status).toBe(303);
      expect(used.headers.get('location')).toBe('/console/sign-in?email=reset%40links.example');
      expect(await opens(before)).toBe(false);
      expect((await visitor(t).signIn('reset@links.example', PASSWORD)).status).toBe(401);
      expect((await visitor(t).signIn('reset@links.example', 'a-new-password-long')).status).toBe(303);
      const again = await someone.post(path, { new_password: 'another-password-long' });
      expect(again.status).toBe(410);
      expect(await again.text()).toContain('this link has been used or has expired');
      expect((await someone.get(path)).status).toBe(410);
    });

    it('refuses an expired link (410)', async () => {
      const orgId = await t.createOrg();
      const id = await addMember(t, orgId, 'late@links.example');
      const { url } = await (await admin('POST', `/admin/orgs/${orgId}/members/${id}/password_reset`)).json();
      await t.server.app.db('member_links').update({ expires_at: new Date(Date.now() - 1000) });
      expect((await visitor(t).get(new URL(url).pathname)).status).toBe(410);
      // Housekeeping forgets links that can no longer open anything.
      expect(await purgeStaleLinks(t.server.app.db, Date.now())).toBeGreaterThanOrEqual(1);
      expect(await t.server.app.db('member_links')).toEqual([]);
    });
  });

  describe('console', () => {
    it('lets a viewer read every page but change nothing (403 on each form), and shows them no forms that change data', async () => {
      const orgId = await t.createOrg();
      await addMember(t, orgId, 'viewer@console.example', PASSWORD, 'viewer');
      const { id: keyId } = await t.createKey(orgId, 'live');
      const { member, csrf } = await signedIn('viewer@console.example');
      for (const path of ['/console', '/console/keys', '/console/apps', '/console/calls', '/console/sessions', '/console/events', '/console/webhooks', '/console/members', '/console/account']) {
        expect((await member.get(path)).status, path).toBe(200);
      }
      const keys = await (await member.get('/console/keys')).text();
      expect(keys).toContain(keyId);
      expect(keys).not.toContain('Create key');
      expect(keys).not.toContain('Revoke');
      expect(await (await member.get('/console/webhooks')).text()).not.toContain('Add endpoint');
      expect(await (await member.get('/console/members')).text()).not.toContain('Invite');
      for (const [path, form] of [
        ['/console/keys', { mode: 'live', scopes: 'translate' }],
        [`/console/keys/${keyId}/revoke`, {}],
        ['/console/webhooks', { mode: 'live', url: 'https://hooks.example.com/', events_scope: 'all' }],
        ['/console/apps/conn_x/revoke', {}],
        ['/console/members/invite', { email: 'x@y.example', role: 'viewer' }],
      ] as const) {
        expect((await member.post(path, { csrf_token: csrf, ...form })).status, path).toBe(403);
      }
      expect(await t.server.app.db('api_keys').where({ org_id: orgId })).toHaveLength(1);
      // Switching to test data is reading, not changing.
      expect((await member.post('/console/mode', { csrf_token: csrf, mode: 'test' })).status).toBe(303);
    });

    it('refuses a viewer the Allow of an app consent (403); an admin may allow', async () => {
      const orgId = await t.createOrg({ name: 'Consent Org' });
      await addMember(t, orgId, 'viewer@consent.example', PASSWORD, 'viewer');
      await addMember(t, orgId, 'admin@consent.example');
      const registered = await admin('POST', '/admin/apps', { name: 'Ticket Bridge', redirect_uris: ['https://app.example/cb'], scopes: ['account:read'] });
      const app = await registered.json();
      const query = { response_type: 'code', client_id: app.client_id, redirect_uri: 'https://app.example/cb', scope: 'account:read', state: 'xyz' };
      const decide = async (email: string) => {
        const { member } = await signedIn(email);
        const page = await member.get(`/oauth2/authorize?${new URLSearchParams(query)}`);
        expect(page.status).toBe(200);
        return member.post('/oauth2/authorize', { ...query, csrf_token: csrfOf(await page.text()), decision: 'allow' });
      };
      const refused = await decide('viewer@consent.example');
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('this needs the admin role or owner; you are a viewer');
      expect(await t.server.app.db('oauth_connections').where({ org_id: orgId })).toHaveLength(0);
      const allowed = await decide('admin@consent.example');
      expect(allowed.status).toBe(302);
      expect(allowed.headers.get('location')).toMatch(/^https:\/\/app\.example\/cb\?code=/);
      // Finished: the connection is listed with who allowed it, and stays when that member is removed.
      const code = new URL(allowed.headers.get('location')!).searchParams.get('code')!;
      const token = await fetch(`${t.url}/oauth2/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/cb', client_id: app.client_id, client_secret: app.client_secret }),
      });
      expect(token.status).toBe(200);
      const { member: viewer } = await signedIn('viewer@consent.example');
      expect(await (await viewer.get('/console/apps')).text()).toContain('by admin@consent.example');
      const adminId = (await t.server.app.db('members').where({ email: 'admin@consent.example' }).first()).id;
      expect((await admin('DELETE', `/admin/orgs/${orgId}/members/${adminId}`)).status).toBe(204);
      const after = await (await viewer.get('/console/apps')).text();
      expect(after).toContain('Ticket Bridge');
      expect(after).toContain('by a member since removed');
    });

    it('lets an admin change data but not members; an owner invites by a one-time link shown once, and the invited person joins with the role', async () => {
      const orgId = await t.createOrg({ name: 'Invite Org' });
      await addMember(t, orgId, 'owner@invite.example', PASSWORD, 'owner');
      await addMember(t, orgId, 'admin@invite.example');
      const { member: adminMember, csrf: adminCsrf } = await signedIn('admin@invite.example');
      expect((await adminMember.post('/console/members/invite', { csrf_token: adminCsrf, email: 'new@invite.example', role: 'admin' })).status).toBe(403);
      expect((await adminMember.post('/console/keys', { csrf_token: adminCsrf, mode: 'test', scopes: 'translate' })).status).toBe(303);

      const { member: owner, csrf } = await signedIn('owner@invite.example');
      const invited = await owner.post('/console/members/invite', { csrf_token: csrf, email: 'New@Invite.example', role: 'admin' });
      expect(invited.status).toBe(303);
      expect(invited.headers.get('location')).toBe('/console/members');
      const shown = await (await owner.follow(invited)).text();
      const url = linkOf(shown)!;
      expect(url).toMatch(/\/console\/link\/cml_/);
      expect(shown).toContain('Invitation for new@invite.example');
      // A reload shows the list, not the link again, and makes no second invitation.
      const reloaded = await (await owner.get('/console/members')).text();
      expect(linkOf(reloaded)).toBeUndefined();
      expect(await t.server.app.db('member_links').where({ org_id: orgId })).toHaveLength(1);
      // An email already a member: said in the page (409), no link.
      const twice = await owner.post('/console/members/invite', { csrf_token: csrf, email: 'admin@invite.example', role: 'viewer' });
      expect(twice.status).toBe(409);
      expect(await twice.text()).toContain('This email is already a member of the organization.');

      const path = new URL(url).pathname;
      const guest = visitor(t);
      expect(await (await guest.get(path)).text()).toContain('Join Invite Org');
      expect((await guest.post(path, { new_password: 'joined-password-long' })).status).toBe(303);
      const members = await (await admin('GET', `/admin/orgs/${orgId}/members`)).json();
      expect(members.find((m: { email: string }) => m.email === 'new@invite.example')).toMatchObject({ role: 'admin', disabled_at: null });
      expect((await visitor(t).signIn('new@invite.example', 'joined-password-long')).status).toBe(303);
      expect((await guest.get(path)).status).toBe(410);
    });

    it('an owner changes roles, disables, removes and makes reset links; the last owner stays (409 page)', async () => {
      const orgId = await t.createOrg();
      const ownerId = await addMember(t, orgId, 'boss@manage.example', PASSWORD, 'owner');
      const staffId = await addMember(t, orgId, 'staff@manage.example');
      const { member: staff } = await signedIn('staff@manage.example');
      const { member: owner, csrf } = await signedIn('boss@manage.example');

      const role = await owner.post(`/console/members/${staffId}/role`, { csrf_token: csrf, role: 'viewer' });
      expect(await (await owner.follow(role)).text()).toContain('staff@manage.example is now a viewer.');
      expect((await t.server.app.db('members').where({ id: staffId }).first()).role).toBe('viewer');

      const demoteSelf = await owner.post(`/console/members/${ownerId}/role`, { csrf_token: csrf, role: 'admin' });
      expect(demoteSelf.status).toBe(409);
      expect(await demoteSelf.text()).toContain('the organization must keep an active owner');

      await owner.post(`/console/members/${staffId}/disable`, { csrf_token: csrf });
      expect(await opens(staff)).toBe(false);
      await owner.post(`/console/members/${staffId}/enable`, { csrf_token: csrf });
      const reset = await owner.follow(await owner.post(`/console/members/${staffId}/password_reset`, { csrf_token: csrf }));
      expect(await reset.text()).toContain('Password reset link for staff@manage.example');
      const removed = await owner.follow(await owner.post(`/console/members/${staffId}/remove`, { csrf_token: csrf }));
      expect(await removed.text()).toContain('The member is removed and signed out everywhere.');
      expect(await t.server.app.db('members').where({ id: staffId })).toEqual([]);
      // Another organization's member: 404, untouched.
      const other = await t.createOrg();
      const theirs = await addMember(t, other, 'theirs@manage.example', PASSWORD, 'owner');
      expect((await owner.post(`/console/members/${theirs}/remove`, { csrf_token: csrf })).status).toBe(404);
      expect((await owner.post(`/console/members/${staffId}/remove`, { csrf_token: 'wrong' })).status).toBe(403);
    });

    it("owners and admins turn the organization's transcripts off and on (calls created afterwards follow); a viewer sees the setting and may not change it", async () => {
      const orgId = await t.createOrg();
      await addMember(t, orgId, 'boss@transcripts.example', PASSWORD, 'owner');
      await addMember(t, orgId, 'staff@transcripts.example');
      await addMember(t, orgId, 'reader@transcripts.example', PASSWORD, 'viewer');
      const { key } = await t.createKey(orgId, 'test');
      const newCallKeeps = async () => {
        const res = await fetch(`${t.url}/v1/calls`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_language: 'en' }) });
        expect(res.status).toBe(201);
        return (await t.server.app.db('calls').where({ id: (await res.json()).id }).first()).transcript;
      };
      const stored = async () => (await t.server.app.db('organizations').where({ id: orgId }).first()).transcripts;

      const { member: staff, csrf } = await signedIn('staff@transcripts.example');
      const overview = await (await staff.get('/console')).text();
      expect(overview).toContain('New calls keep a transcript of what each side said and heard');
      expect(overview).toContain('<input type="hidden" name="transcripts" value="off">');
      const off = await staff.post('/console/settings/transcripts', { csrf_token: csrf, transcripts: 'off' });
      expect(off.status).toBe(303);
      expect(off.headers.get('location')).toBe('/console#transcripts-title');
      const after = await (await staff.follow(off)).text();
      expect(after).toContain('New calls keep no transcript from now on.');
      expect(after).toContain('<button type="submit">Keep transcripts</button>');
      // Said once: a reload shows the setting, not the notice.
      expect(await (await staff.get('/console')).text()).not.toContain('New calls keep no transcript from now on.');
      expect(await stored()).toBe(false);
      expect(await newCallKeeps()).toBe(false);

      const { member: reader, csrf: readerCsrf } = await signedIn('reader@transcripts.example');
      const readOnly = await (await reader.get('/console')).text();
      expect(readOnly).toContain('New calls keep no transcript.');
      expect(readOnly).toContain('Owners and admins change this.');
      expect(readOnly).not.toContain('/console/settings/transcripts');
      const refused = await reader.post('/console/settings/transcripts', { csrf_token: readerCsrf, transcripts: 'on' });
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('this needs the admin role or owner; you are a viewer');
      expect(await stored()).toBe(false);

      const { member: owner, csrf: ownerCsrf } = await signedIn('boss@transcripts.example');
      expect((await owner.post('/console/settings/transcripts', { csrf_token: ownerCsrf, transcripts: 'maybe' })).status).toBe(400);
      expect((await owner.post('/console/settings/transcripts', { csrf_token: 'wrong', transcripts: 'on' })).status).toBe(403);
      expect(await stored()).toBe(false);
      // In the reader's language, from the page catalogue.
      const on = await owner.post('/console/settings/transcripts', { csrf_token: ownerCsrf, transcripts: 'on' });
      expect(on.status).toBe(303);
      expect(await stored()).toBe(true);
      expect(await newCallKeeps()).toBe(true);
      const inGerman = await (await fetch(`${t.url}/console`, { headers: { Cookie: owner.jar.header(), 'Accept-Language': 'de' } })).text();
      expect(inGerman).toContain('Neue Anrufe behalten ab jetzt ein Protokoll.');
      expect(inGerman).toContain('Keine Protokolle mehr behalten');
    });

    it('changes the own password (current one asked; other sessions end, this one stays) and signs out everywhere', async () => {
      const orgId = await t.createOrg();
      await addMember(t, orgId, 'self@account.example', PASSWORD, 'viewer');
      const { member: other } = await signedIn('self@account.example');
      const { member, csrf } = await signedIn('self@account.example');
      const wrong = await member.post('/console/account/password', { csrf_token: csrf, current_password: 'not-the-password', new_password: 'brand-new-password-1' });
      expect(wrong.status).toBe(403);
      expect(await wrong.text()).toContain('The current password is not right.');
      expect((await member.post('/console/account/password', { csrf_token: csrf, current_password: PASSWORD, new_password: 'short' })).status).toBe(422);
      const changed = await member.post('/console/account/password', { csrf_token: csrf, current_password: PASSWORD, new_password: 'brand-new-password-1' });
      expect(await (await member.follow(changed)).text()).toContain('Your password is changed; your other sessions are signed out.');
      expect(await opens(other)).toBe(false);
      expect(await opens(member)).toBe(true);

      const { member: third } = await signedIn('self@account.example', 'brand-new-password-1');
      const out = await member.post('/console/account/sign-out-everywhere', { csrf_token: csrf });
      expect(out.status).toBe(303);
      expect(out.headers.get('location')).toBe('/console/sign-in');
      expect(await opens(third)).toBe(false);
      expect(await opens(member)).toBe(false);
    });
  });
});
