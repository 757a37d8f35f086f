// API keys in the console: a name, the last four characters, who made them and when they were last
// used; rolling a key makes a new one and keeps the old one working for the overlap chosen (none, 1 h,
// 24 h, 7 days), then refuses it. The credential cache is off, so a key's end applies to the next request.
// An event stream opened with the old key stays open through the roll and ends with the overlap; the
// server's clock is injected, and streams look at it every 50 ms (CREDENTIAL_EXPIRY_CHECK_MS). The console's
// live view ends the same way when its console session's lifetime ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { addMember, csrfOf, PASSWORD, visitor, type Visitor } from '../support/consoleVisitor.js';
import { openEventStream, type EventStreamClient } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { waitUntil } from '../support/waiting.js';

const NEW_KEY = /<code id="new-key" class="key">([^<]+)<\/code>/;

describe(`console keys: names and rolls (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  let member: Visitor;
  let csrf: string;
  beforeAll(async () => {
    t = await startTestServer({ CREDENTIAL_CACHE_TTL_MS: '0', CREDENTIAL_EXPIRY_CHECK_MS: '50' });
    orgId = await t.createOrg({ name: 'Keys Org' });
    await addMember(t, orgId, 'maker@keys.example');
    member = visitor(t);
    expect((await member.signIn('maker@keys.example', PASSWORD)).status).toBe(303);
    csrf = csrfOf(await (await member.get('/console/keys')).text());
  });
  afterAll(() => t?.stop());

  const works = async (key: string) => (await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } })).status;
  const createKey = async (name: string, scopes = 'account:read') => {
    const page = await member.follow(await member.post('/console/keys', { csrf_token: csrf, mode: 'test', scopes, name }));
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

  describe('event streams of a rolled key', () => {
    let publisher: string;
    const streams: EventStreamClient[] = [];
    beforeAll(async () => {
      publisher = (await t.createKey(orgId, 'test')).key;
      // Shows (and so clears) what an earlier roll left to show once: the next page shows only our keys.
      await member.get('/console/keys');
    });
    afterAll(async () => {
      t.server.app.now = Date.now;
      for (const stream of streams) stream.close();
      await waitUntil(() => t.server.app.eventStreams.count() === 0, 'the streams to close');
    });

    const stream = async (key: string) => {
      const opened = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
      streams.push(opened);
      expect(opened.status, JSON.stringify(opened.events)).toBe(200);
      return opened;
    };
    /** What a new stream with `key` would get (HEAD opens none). */
    const streamStatus = async (key: string) => (await fetch(`${t.url}/v1/events`, { method: 'HEAD', headers: { Authorization: `Bearer ${key}` } })).status;
    /** Publishes an event (a new session); answers its id. */
    const publish = async () => {
      const res = await fetch(`${t.url}/v1/sessions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${publisher}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ agent_language: 'en' }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const shows = (client: EventStreamClient, sessionId: string) => client.waitFor((e) => e.event === 'session.created' && e.data.data.id === sessionId);
    const idOf = async (name: string) => (await t.server.app.db('api_keys').where({ org_id: orgId, name }).first()).id as string;

    it("keeps the old key's stream through the overlap and ends it when the overlap ends; the new key's stream stays", async () => {
      const old = await createKey('Streaming', 'events:read');
      const oldId = await idOf('Streaming');
      const oldStream = await stream(old);
      const rolled = await roll(oldId, 3600);
      expect(rolled.status).toBe(303);
      const fresh = NEW_KEY.exec(await (await member.follow(rolled)).text())![1]!;
      const freshStream = await stream(fresh);
      // The roll's announcement did not end the old key's stream: both show what happens next.
      const during = await publish();
      await shows(oldStream, during);
      await shows(freshStream, during);
      expect(await streamStatus(old)).toBe(200);

      // The overlap over (the clock moved past it): the old key's stream ends as a revoked key's does.
      const { expires_at } = await rowOf(oldId);
      t.server.app.now = () => new Date(expires_at).getTime() + 1000;
      await oldStream.ended;
      expect(t.server.app.eventStreams.count(`credential:${oldId}`)).toBe(0);
      expect(await streamStatus(old)).toBe(401);
      expect(await streamStatus(fresh)).toBe(200);
      const delivered = oldStream.events.length;
      const after = await publish();
      await shows(freshStream, after);
      expect(oldStream.events.length).toBe(delivered);
      t.server.app.now = Date.now;
    });

    it("ends the console's live view when its console session's lifetime ends, as it ends the session's requests", async () => {
      const watcher = visitor(t);
      expect((await watcher.signIn('maker@keys.example', PASSWORD)).status).toBe(303);
      const session = await t.server.app.db('member_sessions').orderBy('expires_at', 'desc').first();
      const live = await openEventStream(`${t.url}/console/events/stream`, { Cookie: watcher.jar.header() });
      streams.push(live);
      expect(live.status).toBe(200);
      expect(t.server.app.eventStreams.count(`console:${session.id}`)).toBe(1);

      t.server.app.now = () => new Date(session.expires_at).getTime() + 1000;
      await live.ended;
      expect(t.server.app.eventStreams.count(`console:${session.id}`)).toBe(0);
      expect((await fetch(`${t.url}/console/events/stream`, { headers: { Cookie: watcher.jar.header() } })).status).toBe(401);
      t.server.app.now = Date.now;
    });

    it('ends the stream of a rolled key revoked during its overlap at once', async () => {
      const old = await createKey('Revoked in overlap', 'events:read');
      const oldId = await idOf('Revoked in overlap');
      expect((await roll(oldId, 86_400)).status).toBe(303);
      const oldStream = await stream(old);
      const page = await (await member.get('/console/keys')).text();
      expect((await member.post(`/console/keys/${oldId}/revoke`, { csrf_token: csrfOf(page) })).status).toBe(303);
      await oldStream.ended;
      expect(t.server.app.eventStreams.count(`credential:${oldId}`)).toBe(0);
    });
  });
});
