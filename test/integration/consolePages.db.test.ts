// The console's signed-in pages over HTTP: each member sees and changes only their own organization,
// forms without the session's CSRF token or with wrong values are refused with a page and change
// nothing, the live view is the member's (401 without a session, ended by signing out), and the usage
// chart's numbers per UTC day come from the ledger.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dailyUsage } from '../../src/money/index.js';
import { backendName } from '../support/databases.js';
import { addMember, csrfOf, PASSWORD, visitor, type Visitor } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`console pages (${backendName})`, () => {
  let t: TestServer;
  let ours: string;
  let theirs: string;
  let member: Visitor;
  let csrf: string;
  beforeAll(async () => {
    t = await startTestServer();
    ours = await t.createOrg({ name: 'Ours', balance: 5 });
    theirs = await t.createOrg({ name: 'Theirs' });
    await addMember(t, ours, 'ours@example.com');
    member = visitor(t);
    expect((await member.signIn('ours@example.com', PASSWORD)).status).toBe(303);
    csrf = csrfOf(await (await member.get('/console/keys')).text());
  });
  afterAll(() => t?.stop());

  const works = async (key: string) => (await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } })).status;

  it('sends a visitor without a session to sign-in from every page, and back to that page afterwards', async () => {
    for (const path of ['/console/keys', '/console/apps', '/console/calls?status=open', '/console/sessions', '/console/events']) {
      const res = await visitor(t).get(path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get('location')).toBe(`/console/sign-in?return_to=${encodeURIComponent(path)}`);
    }
    const form = await visitor(t).post('/console/keys', { mode: 'live', scopes: 'translate' });
    expect(form.status).toBe(401);
    expect(await form.text()).toContain('sign in again');
  });

  it("refuses to revoke another organization's key (404 page) and leaves it working", async () => {
    const other = await t.createKey(theirs, 'live');
    const res = await member.post(`/console/keys/${other.id}/revoke`, { csrf_token: csrf });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('API key not found');
    expect(await works(other.key)).toBe(200);
  });

  it("does not touch another organization's app connection", async () => {
    const [{ client_id: clientId }] = await t.server.app
      .db('oauth_apps')
      .insert({ client_id: 'app_console_other', name: 'Other App', client_type: 'public', redirect_uris: ['https://x.example/cb'], scopes: ['account:read'] })
      .returning('client_id');
    await t.server.app.db('oauth_connections').insert({ id: 'conn_console_other', org_id: theirs, client_id: clientId, scopes: ['account:read'], activated_at: new Date() });
    const res = await member.post('/console/apps/conn_console_other/revoke', { csrf_token: csrf });
    expect(res.status).toBe(303);
    expect((await t.server.app.db('oauth_connections').where({ id: 'conn_console_other' }).first()).revoked_at).toBeNull();
    expect(await (await member.get('/console/apps')).text()).not.toContain('Other App');
  });

  it('refuses a key form without the CSRF token, without scopes, with an unknown scope or mode, and makes no key', async () => {
    const before = await t.server.app.db('api_keys').where({ org_id: ours }).count({ n: '*' }).first();
    const cases: [Record<string, string>, number, string][] = [
      [{ mode: 'live', scopes: 'translate' }, 403, 'CSRF token'],
      [{ mode: 'live', csrf_token: csrf }, 422, 'Choose at least one scope.'],
      [{ mode: 'live', scopes: 'admin', csrf_token: csrf }, 422, 'Unknown scope.'],
      [{ mode: 'staging', scopes: 'translate', csrf_token: csrf }, 422, 'Choose live or test.'],
    ];
    for (const [form, status, message] of cases) {
      const res = await member.post('/console/keys', form);
      expect(res.status, JSON.stringify(form)).toBe(status);
      expect(await res.text()).toContain(message);
    }
    const other = await member.post('/console/keys', { mode: 'live', scopes: 'translate', csrf_token: csrf }, { Origin: 'https://evil.example' });
    expect(other.status).toBe(403);
    expect(await t.server.app.db('api_keys').where({ org_id: ours }).count({ n: '*' }).first()).toEqual(before);
  });

  it('creates a key of the chosen mode and scopes (303 to the page showing the secret once), lists it in that mode only, and revokes it', async () => {
    const posted = await member.post('/console/keys', new URLSearchParams([['csrf_token', csrf], ['mode', 'test'], ['scopes', 'calls:read'], ['scopes', 'account:read']]) as never);
    expect(posted.headers.get('location')).toBe('/console/keys');
    const res = await member.follow(posted);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    const key = /<code id="new-key" class="key">([^<]+)<\/code>/.exec(html)![1]!;
    expect(key).toMatch(/^spk_test_/);
    const account = await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } });
    expect(await account.json()).toMatchObject({ mode: 'test', scopes: ['calls:read', 'account:read'] });
    const row = await t.server.app.db('api_keys').where({ org_id: ours, mode: 'test' }).orderBy('created_at', 'desc').first();

    // The test keys are in view now (the mode switched to the new key's); live ones are not.
    const testPage = await (await member.get('/console/keys')).text();
    expect(testPage).toContain(row.id);
    expect(testPage).not.toContain(key);
    expect(await (await member.post('/console/mode', { csrf_token: csrf, mode: 'live', return_to: '/console/keys' })).status).toBe(303);
    expect(await (await member.get('/console/keys')).text()).not.toContain(row.id);

    const revoked = await member.post(`/console/keys/${row.id}/revoke`, { csrf_token: csrf });
    expect(revoked.status).toBe(303);
    expect(await works(key)).toBe(401);
  });

  it('switches the mode only to live or test, and returns only to a console page', async () => {
    const bad = await member.post('/console/mode', { csrf_token: csrf, mode: 'staging' });
    expect(bad.status).toBe(400);
    const away = await member.post('/console/mode', { csrf_token: csrf, mode: 'test', return_to: 'https://evil.example/' });
    expect(away.headers.get('location')).toBe('/console');
    const back = await member.post('/console/mode', { csrf_token: csrf, mode: 'live', return_to: '/console/calls' });
    expect(back.headers.get('location')).toBe('/console/calls');
  });

  it('opens the live view only with a session (401 JSON otherwise) and ends it when the member signs out', async () => {
    const anonymous = await fetch(`${t.url}/console/events/stream`, { headers: { Accept: 'text/event-stream' } });
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).detail).toMatch(/sign in again/);

    const viewer = visitor(t);
    await viewer.signIn('ours@example.com', PASSWORD);
    const viewerCsrf = csrfOf(await (await viewer.get('/console')).text());
    const stream = await fetch(`${t.url}/console/events/stream`, { headers: { Cookie: viewer.jar.header(), Accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = stream.body!.getReader();
    let text = '';
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    };
    await readUntil(/^: connected\n\n/);

    // An event of the organization arrives unnamed (the page's EventSource hears it with one handler).
    const { key } = await t.createKey(ours, 'live');
    const call = await fetch(`${t.url}/v1/calls`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: '{"agent_language":"en"}' });
    expect(call.status).toBe(201);
    await readUntil(/\n\n[^]*\n\n/);
    expect(text).toMatch(/^: connected\n\nid: evt_\w+\ndata: \{"id":"evt_\w+","type":"call.created"/);

    expect((await viewer.post('/console/sign-out', { csrf_token: viewerCsrf })).status).toBe(303);
    // Signed out: the stream ends (read on until it does).
    for (;;) if ((await reader.read()).done) break;
  });

  it('sums the ledger per UTC day and kind in the mode asked for, over the window that ends today', async () => {
    const org = await t.createOrg({ name: 'Usage' });
    const at = (iso: string) => new Date(iso);
    const row = (mode: string, kind: string, quantity: number, amount: number, created: string) => ({
      org_id: org, mode, kind, quantity, amount_micros: amount, reference: 'test', created_at: at(created),
    });
    await t.server.app.db('ledger_entries').insert([
      row('live', 'text', 100, -2_000, '2026-11-20T23:59:59Z'),
      row('live', 'text', 50, -1_000, '2026-11-21T00:00:00Z'),
      row('live', 'text', 25, -500, '2026-11-21T12:00:00Z'),
      row('live', 'call', 60, -100_000, '2026-11-21T08:00:00Z'),
      row('live', 'credit', 0, 5_000_000, '2026-11-21T08:00:00Z'),
      row('test', 'text', 999, 0, '2026-11-21T08:00:00Z'),
      row('live', 'text', 7, -140, '2026-11-14T23:59:59Z'), // before the window
    ]);
    const now = Date.parse('2026-11-21T18:00:00Z');
    expect(await dailyUsage(t.server.app.db, org, 'live', 7, now)).toEqual([
      { day: '2026-11-20', kind: 'text', quantity: 100, cost: 0.002 },
      { day: '2026-11-21', kind: 'call', quantity: 60, cost: 0.1 },
      { day: '2026-11-21', kind: 'text', quantity: 75, cost: 0.0015 },
    ]);
    expect(await dailyUsage(t.server.app.db, org, 'test', 7, now)).toEqual([{ day: '2026-11-21', kind: 'text', quantity: 999, cost: 0 }]);
  });
});
