// The console's webhooks page over HTTP: a member adds endpoints (the signing secret shown once, and it
// is the one deliveries are signed with), sees them with their recent deliveries, resends one, rotates
// a secret, disables, enables and deletes; refused forms say why with a 4xx and keep what was typed;
// endpoints of the other mode are neither shown nor touched; forms without the CSRF token change
// nothing. Deliveries go to a real receiver (a server that allows private addresses); the
// private-address refusal is checked on a server that does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { addMember, csrfOf, PASSWORD, visitor, type Visitor } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { Receiver, verify } from '../support/webhookReceiver.js';

const SECRET = /<code id="new-secret" class="key">([^<]+)<\/code>/;

/** An endpoint's part of the page. */
const sectionOf = (html: string, endpointId: string) => {
  const found = new RegExp(`<section class="panel endpoint" id="${endpointId}"[^]*?</section>`).exec(html);
  expect(found, endpointId).not.toBeNull();
  return found![0];
};

interface EndpointFields {
  url: string;
  description?: string;
  /** Checked event types; absent: all events. */
  events?: string[];
  mode?: 'live' | 'test';
}

describe(`console webhooks page (${backendName})`, () => {
  let t: TestServer;
  let strict: TestServer;
  let receiver: Receiver;

  /** A new organization on `server`, its member signed in, and the member's CSRF token. */
  const signedIn = async (server: TestServer, email: string) => {
    const orgId = await server.createOrg({ name: 'Hooks Org', balance: 5 });
    await addMember(server, orgId, email);
    const member = visitor(server);
    expect((await member.signIn(email, PASSWORD)).status).toBe(303);
    const csrf = csrfOf(await (await member.get('/console/webhooks')).text());
    return { orgId, member, csrf };
  };
  const addEndpoint = (member: Visitor, csrf: string, fields: EndpointFields) =>
    member.post(
      '/console/webhooks',
      new URLSearchParams([
        ['csrf_token', csrf],
        ['mode', fields.mode ?? 'live'],
        ['url', fields.url],
        ['description', fields.description ?? ''],
        ['events_scope', fields.events ? 'some' : 'all'],
        ...(fields.events ?? []).map((type) => ['events', type]),
      ]) as never,
    );
  const endpointRows = (server: TestServer, orgId: string) => server.server.app.db('webhook_endpoints').where({ org_id: orgId }).orderBy('created_at');
  /** A real event (session.created) of the organization's live mode, and its delivery to `count` endpoints made. */
  const liveSessionDelivered = async (orgId: string, count = 1) => {
    const { key } = await t.createKey(orgId, 'live');
    const before = receiver.received.length;
    const session = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_language: 'en', customer_language: 'de' }),
    });
    expect(session.status).toBe(201);
    await receiver.until(before + count);
    // The pass that sent it has recorded its attempt once the next pass has run.
    await t.server.app.webhooks.tick();
    return receiver.received[before]!;
  };
  const pageOf = async (member: Visitor) => {
    const res = await member.get('/console/webhooks');
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    [t, strict, receiver] = await Promise.all([startTestServer({ WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' }), startTestServer(), Receiver.start()]);
  });
  afterAll(async () => {
    await Promise.all([t?.stop(), strict?.stop(), receiver?.close()]);
  });

  it('is in the console navigation, and sends a visitor without a session to sign in', async () => {
    const { member } = await signedIn(t, 'nav@hooks.example');
    const html = await pageOf(member);
    expect(html).toContain('<a href="/console/webhooks" aria-current="page">Webhooks</a>');
    expect(html).toContain('No live webhook endpoints yet.');
    expect(await (await member.get('/console/keys')).text()).toContain('<a href="/console/webhooks">Webhooks</a>');
    const anonymous = await visitor(t).get('/console/webhooks');
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/console/sign-in?return_to=%2Fconsole%2Fwebhooks');
    expect((await visitor(t).post('/console/webhooks', { mode: 'live', url: receiver.url, events_scope: 'all' })).status).toBe(401);
  });

  it('adds endpoints (201, the secret shown once) and lists them newest first with events, description, state and creation time', async () => {
    const { orgId, member, csrf } = await signedIn(t, 'list@hooks.example');
    const posted = await addEndpoint(member, csrf, { url: `${receiver.url}/tickets`, description: 'Ticket <sync>', events: ['session.created', 'call.ended'] });
    // Post/redirect/get: the page after the form shows the secret once; a reload neither repeats the form nor shows it again.
    expect(posted.status).toBe(303);
    const first = await member.follow(posted);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const firstHtml = await first.text();
    const secret = SECRET.exec(firstHtml)![1]!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(firstHtml).toContain('Copy it now: it is not shown again.');
    expect(firstHtml).toContain('<button type="button" data-copy="new-secret">Copy</button>');
    // The form is blank again after a success.
    expect(firstHtml).toContain('name="url" type="url" required maxlength="2048" placeholder="https://example.com/webhooks" value=""');

    expect((await addEndpoint(member, csrf, { url: `${receiver.url}/all` })).status).toBe(303);
    const [older, newer] = await endpointRows(t, orgId);
    expect(older).toMatchObject({ mode: 'live', url: `${receiver.url}/tickets`, description: 'Ticket <sync>', enabled_events: ['session.created', 'call.ended'], disabled_at: null });
    expect(newer).toMatchObject({ url: `${receiver.url}/all`, description: null, enabled_events: ['*'] });
    // The secret is stored sealed, never as shown.
    expect(JSON.stringify(older)).not.toContain(secret.slice('whsec_'.length));

    const html = await pageOf(member);
    expect(html).not.toContain(secret);
    expect(html.indexOf(`id="${newer.id}"`)).toBeLessThan(html.indexOf(`id="${older.id}"`));
    const listed = sectionOf(html, older.id);
    expect(listed).toContain(`<code>${receiver.url}/tickets</code>`);
    expect(listed).toContain('<code>session.created</code> <code>call.ended</code>');
    expect(listed).toContain('Ticket &lt;sync&gt;');
    expect(listed).toContain('Enabled');
    expect(listed).toContain(`<time datetime="${older.created_at.toISOString()}">`);
    expect(listed).toContain('No deliveries yet.');
    expect(sectionOf(html, newer.id)).toContain('<dt>Events</dt><dd>all events</dd>');
  });

  it('refuses a private or plain-http URL, a missing event type and one endpoint too many: 4xx, said in the page, the form kept, nothing stored', async () => {
    const { orgId, member, csrf } = await signedIn(strict, 'refused@hooks.example');
    const privateUrl = await addEndpoint(member, csrf, { url: 'https://10.0.0.5/hooks', description: 'Kept "as typed"', events: ['call.ended'] });
    expect(privateUrl.status).toBe(422);
    const html = await privateUrl.text();
    expect(html).toContain(
      '<p class="error" role="alert">URL: is a loopback, private or link-local address; webhooks are only delivered to public addresses.</p>',
    );
    expect(html).toContain('value="https://10.0.0.5/hooks"');
    expect(html).toContain('value="Kept &quot;as typed&quot;"');
    expect(html).toContain('name="events_scope" value="some" checked');
    expect(html).toContain('name="events" value="call.ended" checked');
    expect(html).not.toContain('name="events" value="session.created" checked');

    const plain = await addEndpoint(member, csrf, { url: 'http://hooks.example.com/x' });
    expect(plain.status).toBe(422);
    expect(await plain.text()).toContain('URL: a live-mode endpoint must use https.');
    const none = await addEndpoint(member, csrf, { url: 'https://hooks.example.com/x', events: [] });
    expect(none.status).toBe(422);
    expect(await none.text()).toContain('Events: choose at least one event type, or all events.');
    const unknown = await addEndpoint(member, csrf, { url: 'https://hooks.example.com/x', events: ['call.nonsense'] });
    expect(unknown.status).toBe(422);
    expect(await unknown.text()).toContain('Events: call.nonsense is not an event type.');
    const nul = await addEndpoint(member, csrf, { url: 'https://hooks.example.com/x', description: 'a\u0000b' });
    expect(nul.status).toBe(422);
    expect(await nul.text()).toContain('Description: must not contain the NUL character (U+0000).');
    expect(await endpointRows(strict, orgId)).toEqual([]);

    // The service's limit per mode: the 17th is refused with its 409.
    await strict.server.app.db('webhook_endpoints').insert(
      Array.from({ length: 16 }, (_, i) => ({ id: `we_full${i}`, org_id: orgId, mode: 'test', url: 'https://hooks.example.com/', enabled_events: ['*'], secret_sealed: 'x' })),
    );
    const full = await addEndpoint(member, csrf, { url: 'https://hooks.example.com/more', mode: 'test' });
    expect(full.status).toBe(409);
    const fullHtml = await full.text();
    expect(fullHtml).toContain('An organization may have at most 16 webhook endpoints per mode; delete one first.');
    expect(fullHtml).toContain('value="https://hooks.example.com/more"');
    expect(await endpointRows(strict, orgId)).toHaveLength(16);
  });

  it('shows each delivery with its attempts, last answer and next attempt, resends one, and signs with the secret a rotation shows', async () => {
    const { orgId, member, csrf } = await signedIn(t, 'deliveries@hooks.example');
    const added = await member.follow(await addEndpoint(member, csrf, { url: `${receiver.url}/deliveries`, events: ['session.created'] }));
    const secret = SECRET.exec(await added.text())![1]!;
    const [endpoint] = await endpointRows(t, orgId);

    // A real event, answered with a 500 the first time.
    receiver.statuses = [500];
    const first = await liveSessionDelivered(orgId);
    expect(verify(secret, first, Math.floor(Date.now() / 1000)).ok).toBe(true);
    const before = receiver.received.indexOf(first);
    const delivery = await t.server.app.db('webhook_deliveries').where({ endpoint_id: endpoint.id }).first();
    expect(delivery).toMatchObject({ event_type: 'session.created', status: 'pending', attempt_count: 1 });
    let listed = sectionOf(await pageOf(member), endpoint.id);
    const row = () => /<tr><td><code>session\.created<\/code>[^]*?<\/tr>/.exec(listed)![0];
    expect(row()).toContain('<span class="delivery pending">pending</span>');
    expect(row()).toContain('<td>1</td><td>HTTP 500</td>');
    expect(row()).toContain(`<time datetime="${delivery.next_attempt_at.toISOString()}">`);
    expect(row()).toContain(`aria-label="Resend ${delivery.id}"`);

    // Rotated: the new secret shown once, the old one no longer signs.
    const rotated = await member.follow(await member.post(`/console/webhooks/${endpoint.id}/rotate`, { csrf_token: csrf, mode: 'live' }));
    expect(rotated.status).toBe(200);
    const rotatedHtml = await rotated.text();
    const newSecret = SECRET.exec(rotatedHtml)![1]!;
    expect(newSecret).not.toBe(secret);
    expect(rotatedHtml).toContain('New signing secret of');
    expect(await pageOf(member)).not.toContain(newSecret);

    // Resent now (not in a minute, as the retry would be), signed with the new secret.
    const resent = await member.post(`/console/webhooks/${endpoint.id}/deliveries/${delivery.id}/resend`, { csrf_token: csrf, mode: 'live' });
    expect(resent.status).toBe(303);
    expect(resent.headers.get('location')).toBe(`/console/webhooks#${endpoint.id}`);
    await receiver.until(before + 2);
    await t.server.app.webhooks.tick();
    const again = receiver.received[before + 1]!;
    expect(again.headers['webhook-id']).toBe(delivery.id);
    expect(verify(newSecret, again, Math.floor(Date.now() / 1000)).ok).toBe(true);
    expect(verify(secret, again, Math.floor(Date.now() / 1000)).ok).toBe(false);
    listed = sectionOf(await pageOf(member), endpoint.id);
    expect(row()).toContain('<span class="delivery succeeded">succeeded</span>');
    expect(row()).toContain('<td>2</td><td>HTTP 200</td><td><span class="muted">none</span></td>');

    expect((await member.post(`/console/webhooks/${endpoint.id}/deliveries/wd_unknown/resend`, { csrf_token: csrf, mode: 'live' })).status).toBe(404);
  });

  it("disables (no resend then) and enables an endpoint, deletes it after a confirmation, and finds no other organization's endpoint", async () => {
    const { orgId, member, csrf } = await signedIn(t, 'states@hooks.example');
    await addEndpoint(member, csrf, { url: `${receiver.url}/states`, events: ['session.created'] });
    const [endpoint] = await endpointRows(t, orgId);
    await liveSessionDelivered(orgId);

    const disabled = await member.post(`/console/webhooks/${endpoint.id}/disable`, { csrf_token: csrf, mode: 'live' });
    expect(disabled.status).toBe(303);
    expect(disabled.headers.get('location')).toBe(`/console/webhooks#${endpoint.id}`);
    const row = (await endpointRows(t, orgId))[0];
    expect(row).toMatchObject({ disabled_reason: 'manual' });
    let listed = sectionOf(await pageOf(member), endpoint.id);
    expect(listed).toContain(`<strong>Disabled</strong> <time datetime="${row.disabled_at.toISOString()}">`);
    expect(listed).toContain('by a member or an API key');
    expect(listed).toContain(`aria-label="Enable ${endpoint.id}"`);
    expect(listed).not.toContain('aria-label="Resend');
    expect(listed).toContain('Enable the endpoint to send deliveries again.');

    // Failing for three days is said so.
    await t.server.app.db('webhook_endpoints').where({ id: endpoint.id }).update({ disabled_reason: 'failing' });
    expect(sectionOf(await pageOf(member), endpoint.id)).toContain('its deliveries failed for 3 days');

    expect((await member.post(`/console/webhooks/${endpoint.id}/enable`, { csrf_token: csrf, mode: 'live' })).status).toBe(303);
    expect((await endpointRows(t, orgId))[0]).toMatchObject({ disabled_at: null, disabled_reason: null });
    listed = sectionOf(await pageOf(member), endpoint.id);
    expect(listed).toContain('Enabled');
    expect(listed).toContain(`aria-label="Disable ${endpoint.id}"`);
    expect(listed).toContain('aria-label="Resend wd_');

    // Another organization's endpoint does not exist for this member.
    const other = await signedIn(t, 'other@hooks.example');
    for (const action of ['disable', 'enable', 'rotate', 'delete']) {
      const res = await other.member.post(`/console/webhooks/${endpoint.id}/${action}`, { csrf_token: other.csrf, mode: 'live' });
      expect(res.status, action).toBe(404);
      expect(await res.text()).toContain('webhook endpoint not found');
    }

    // Delete sits behind a confirmation (a disclosure holding the form).
    expect(listed).toMatch(new RegExp(`<details class="confirm"><summary>Delete…</summary>\\s*<form method="post" action="/console/webhooks/${endpoint.id}/delete">`));
    const deleted = await member.post(`/console/webhooks/${endpoint.id}/delete`, { csrf_token: csrf, mode: 'live' });
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/console/webhooks');
    expect(await endpointRows(t, orgId)).toEqual([]);
    expect(await t.server.app.db('webhook_deliveries').where({ endpoint_id: endpoint.id })).toEqual([]);
    expect(await pageOf(member)).toContain('No live webhook endpoints yet.');
  });

  it('shows and changes only the endpoints of the mode in view', async () => {
    const { orgId, member, csrf } = await signedIn(t, 'modes@hooks.example');
    // Added from a page showing test mode: a test endpoint, and test mode in view from then on.
    const added = await addEndpoint(member, csrf, { url: `${receiver.url}/test-only`, mode: 'test' });
    expect(added.status).toBe(303);
    expect(added.headers.getSetCookie().join()).toContain('console_mode=test');
    const [endpoint] = await endpointRows(t, orgId);
    expect(endpoint.mode).toBe('test');
    const testPage = await pageOf(member);
    expect(testPage).toContain(`id="${endpoint.id}"`);
    expect(testPage).toContain('Add a test endpoint');

    expect((await member.post('/console/mode', { csrf_token: csrf, mode: 'live', return_to: '/console/webhooks' })).headers.get('location')).toBe('/console/webhooks');
    const livePage = await pageOf(member);
    expect(livePage).not.toContain(endpoint.id);
    expect(livePage).toContain('No live webhook endpoints yet.');
    // A live page's form does not reach the test endpoint.
    expect((await member.post(`/console/webhooks/${endpoint.id}/disable`, { csrf_token: csrf, mode: 'live' })).status).toBe(404);
    expect((await endpointRows(t, orgId))[0].disabled_at).toBeNull();
    const badMode = await member.post(`/console/webhooks/${endpoint.id}/disable`, { csrf_token: csrf, mode: 'staging' });
    expect(badMode.status).toBe(400);
  });

  it('refuses every webhook form without the CSRF token or from another site, and changes nothing', async () => {
    const { orgId, member, csrf } = await signedIn(t, 'csrf@hooks.example');
    await addEndpoint(member, csrf, { url: `${receiver.url}/csrf` });
    const [endpoint] = await endpointRows(t, orgId);
    const base = `/console/webhooks/${endpoint.id}`;
    const forms: [string, Record<string, string>][] = [
      ['/console/webhooks', { mode: 'live', url: `${receiver.url}/forged`, events_scope: 'all' }],
      [`${base}/disable`, { mode: 'live' }],
      [`${base}/rotate`, { mode: 'live' }],
      [`${base}/delete`, { mode: 'live' }],
      [`${base}/deliveries/wd_any/resend`, { mode: 'live' }],
    ];
    for (const [path, form] of forms) {
      const missing = await member.post(path, form);
      expect(missing.status, path).toBe(403);
      expect(await missing.text()).toContain('CSRF token');
      expect((await member.post(path, { ...form, csrf_token: 'wrong' })).status, path).toBe(403);
      expect((await member.post(path, { ...form, csrf_token: csrf }, { Origin: 'https://evil.example' })).status, path).toBe(403);
    }
    expect(await endpointRows(t, orgId)).toEqual([endpoint]);
  });

  it('rotates a secret with an overlap: both sign until it ends, said on the page; other overlaps are refused', async () => {
    const { orgId, member, csrf } = await signedIn(t, 'overlap@hooks.example');
    await member.follow(await addEndpoint(member, csrf, { url: `${receiver.url}/overlap` }));
    const [endpoint] = await endpointRows(t, orgId);
    expect((await member.post(`/console/webhooks/${endpoint.id}/rotate`, { csrf_token: csrf, mode: 'live', overlap_seconds: '600' })).status).toBe(400);
    const rotated = await member.follow(await member.post(`/console/webhooks/${endpoint.id}/rotate`, { csrf_token: csrf, mode: 'live', overlap_seconds: '3600' }));
    expect(await rotated.text()).toContain('Deliveries are signed with it and with the old secret until');
    const [row] = await endpointRows(t, orgId);
    expect(row.previous_secret_sealed).not.toBeNull();
    expect(new Date(row.previous_secret_expires_at).getTime() - Date.now()).toBeGreaterThan(3500_000);
  });
});
