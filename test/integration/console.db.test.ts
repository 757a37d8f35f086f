// The console's sign-in: the form, the session cookie and its attributes, wrong credentials, guessing
// limits per address and per email, return_to, CSRF, sign-out, and expiry on an injected clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInUrl } from '../../src/console/session.js';
import { purgeExpiredMemberSessions } from '../../src/members/sessions.js';
import { backendName } from '../support/databases.js';
import { addMember, csrfOf, PASSWORD, visitor } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`console sign-in (${backendName})`, () => {
  const lines: string[] = [];
  let t: TestServer;
  let orgId: string;
  beforeAll(async () => {
    t = await startTestServer({}, { logLevel: 'trace', logDestination: { write: (line: string) => lines.push(line) } });
    orgId = await t.createOrg({ name: 'Console & Co <Org>' });
    await addMember(t, orgId, 'member@example.com');
  });
  afterAll(() => t?.stop());

  it('sends a visitor who is not signed in from /console to the sign-in page, which returns to /console', async () => {
    const res = await visitor(t).get('/console');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/sign-in?return_to=%2Fconsole');
    expect(signInUrl('/console')).toBe('/console/sign-in?return_to=%2Fconsole');
  });

  it('shows a sign-in form with Email, Password and Sign in, local assets only, never cached or framed elsewhere', async () => {
    const res = await visitor(t).get('/console/sign-in');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
    const html = await res.text();
    expect(html).toMatch(/<label for="email">Email<\/label>/);
    expect(html).toMatch(/<label for="password">Password<\/label>/);
    expect(html).toMatch(/<button type="submit">Sign in<\/button>/);
    expect(html).toContain('name="viewport"');
    expect(html).not.toMatch(/https?:\/\//);
    const css = await fetch(`${t.url}/console-assets/console.css`);
    expect(css.status).toBe(200);
  });

  it('signs in: 303 to /console, an HttpOnly SameSite=Lax cookie (not Secure over http), the organization shown', async () => {
    const v = visitor(t);
    const res = await v.signIn('Member@Example.com', PASSWORD);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console');
    const cookie = res.headers.getSetCookie().find((line) => line.startsWith('console_session='))!;
    expect(cookie).toMatch(/^console_session=cst_[0-9A-Za-z]{40};/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/; Max-Age=43200/);
    expect(cookie).not.toMatch(/Secure/);

    const home = await v.get('/console');
    expect(home.status).toBe(200);
    const html = await home.text();
    expect(html).toContain('Console &amp; Co &lt;Org&gt;');
    expect(html).toContain('member@example.com');
    expect(html).toMatch(/<button type="submit" class="secondary">Sign out<\/button>/);
    // Only a hash of the token is stored.
    const token = v.jar.cookies.get('console_session')!;
    const stored = await t.server.app.db('member_sessions').select('token_hash');
    expect(JSON.stringify(stored)).not.toContain(token);
  });

  it('answers a wrong password and an unknown email alike: 401, the form again, the same message', async () => {
    const wrong = await visitor(t).signIn('member@example.com', 'not-the-password-at-all');
    const unknown = await visitor(t).signIn('nobody@example.com', 'not-the-password-at-all');
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.headers.getSetCookie().some((line) => line.startsWith('console_session='))).toBe(false);
    }
    const [a, b] = [await wrong.text(), await unknown.text()];
    const message = (html: string) => /<p class="error" role="alert" id="sign-in-error">([^<]*)<\/p>/.exec(html)?.[1];
    expect(message(a)).toBe('Wrong email or password.');
    expect(message(b)).toBe(message(a));
    expect(a).toContain('<button type="submit">Sign in</button>');
    expect(a).not.toContain('not-the-password-at-all');
  });

  it('returns to a path of this site, and to /console for anything else (no open redirect)', async () => {
    const target = '/oauth2/authorize?client_id=app_1&scope=account%3Aread&state=x';
    const ok = await visitor(t).signIn('member@example.com', PASSWORD, { returnTo: target });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe(target);
    for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)', '/\t/evil.example', 'console']) {
      const res = await visitor(t).signIn('member@example.com', PASSWORD, { returnTo: evil });
      expect(res.status, evil).toBe(303);
      expect(res.headers.get('location'), evil).toBe('/console');
    }
    // Also when return_to is posted directly.
    const v = visitor(t);
    const html = await (await v.get('/console/sign-in')).text();
    const res = await v.post('/console/sign-in', { email: 'member@example.com', password: PASSWORD, csrf_token: csrfOf(html), return_to: '//evil.example' });
    expect(res.headers.get('location')).toBe('/console');
    expect(signInUrl('//evil.example')).toBe('/console/sign-in?return_to=%2Fconsole');
  });

  it('refuses a sign-in form without its token or from another site (403), and signs nobody in', async () => {
    const v = visitor(t);
    const html = await (await v.get('/console/sign-in')).text();
    const noToken = await v.post('/console/sign-in', { email: 'member@example.com', password: PASSWORD });
    expect(noToken.status).toBe(403);
    const otherSite = await v.post('/console/sign-in', { email: 'member@example.com', password: PASSWORD, csrf_token: csrfOf(html) }, { Origin: 'https://evil.example' });
    expect(otherSite.status).toBe(403);
    const noCookie = await visitor(t).post('/console/sign-in', { email: 'member@example.com', password: PASSWORD, csrf_token: csrfOf(html) });
    expect(noCookie.status).toBe(403);
    expect(v.jar.cookies.has('console_session')).toBe(false);
  });

  it('signs out only with the session CSRF token (and a same-site Origin); afterwards the cookie opens nothing', async () => {
    const v = visitor(t);
    await v.signIn('member@example.com', PASSWORD);
    const token = v.jar.cookies.get('console_session')!;
    const csrf = csrfOf(await (await v.get('/console')).text());

    const missing = await v.post('/console/sign-out', {});
    expect(missing.status).toBe(403);
    // A console form that is refused gets a page saying why.
    expect(missing.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await missing.text()).toMatch(/CSRF token/);
    expect((await v.post('/console/sign-out', { csrf_token: 'x'.repeat(40) })).status).toBe(403);
    expect((await v.post('/console/sign-out', { csrf_token: csrf }, { Origin: 'https://evil.example' })).status).toBe(403);
    expect((await v.post('/console/sign-out', { csrf_token: csrf }, { Origin: 'null' })).status).toBe(403);
    expect((await v.get('/console')).status).toBe(200);

    const out = await v.post('/console/sign-out', { csrf_token: csrf }, { Origin: t.url });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/console/sign-in');
    expect(out.headers.getSetCookie().some((line) => /^console_session=;/.test(line))).toBe(true);
    expect(v.jar.cookies.has('console_session')).toBe(false);
    const replay = await fetch(`${t.url}/console`, { redirect: 'manual', headers: { Cookie: `console_session=${token}` } });
    expect(replay.status).toBe(303);
  });

  it('ends a session 12 hours after sign-in (injected clock)', async () => {
    const v = visitor(t);
    await v.signIn('member@example.com', PASSWORD);
    const start = Date.now();
    try {
      t.server.app.now = () => start + 12 * 3600_000 - 60_000;
      expect((await v.get('/console')).status).toBe(200);
      t.server.app.now = () => start + 12 * 3600_000 + 1_000;
      const expired = await v.get('/console');
      expect(expired.status).toBe(303);
      expect(expired.headers.get('location')).toBe('/console/sign-in?return_to=%2Fconsole');
      t.server.app.now = () => start;
      // Gone for good, not only refused while the clock is late.
      expect((await v.get('/console')).status).toBe(303);
    } finally {
      t.server.app.now = Date.now;
    }
  });

  it('lets housekeeping delete expired sessions, and only those', async () => {
    const v = visitor(t);
    await v.signIn('member@example.com', PASSWORD);
    const [{ id, expires_at: expiresAt }] = await t.server.app.db('member_sessions').orderBy('created_at', 'desc').limit(1);
    // Sessions of earlier tests that expire before this one may go; this one stays until its time.
    await purgeExpiredMemberSessions(t.server.app.db, new Date(expiresAt).getTime() - 1000);
    expect(await t.server.app.db('member_sessions').where({ id }).first()).toBeDefined();
    expect((await v.get('/console')).status).toBe(200);
    expect(await purgeExpiredMemberSessions(t.server.app.db, new Date(expiresAt).getTime())).toBeGreaterThanOrEqual(1);
    expect(await t.server.app.db('member_sessions').where({ id }).first()).toBeUndefined();
    expect((await v.get('/console')).status).toBe(303);
  });

  it('never writes a password or a session token to the log', async () => {
    const v = visitor(t);
    await v.signIn('member@example.com', PASSWORD);
    await v.get('/console');
    const token = v.jar.cookies.get('console_session')!;
    const log = lines.join('\n');
    expect(log).toContain('/console/sign-in');
    expect(log).not.toContain(PASSWORD);
    expect(log).not.toContain('not-the-password-at-all');
    expect(log).not.toContain(token);
  });
});

describe(`console sign-in behind https and its guessing limits (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  beforeAll(async () => {
    t = await startTestServer({
      PUBLIC_BASE_URL: 'https://console.example.org',
      TRUST_PROXY: '1',
      FAILED_ATTEMPTS_PER_MINUTE: '3',
    });
    orgId = await t.createOrg({ name: 'Secure Org' });
    await addMember(t, orgId, 'alice@example.com');
    await addMember(t, orgId, 'bob@example.com');
  });
  afterAll(() => t?.stop());

  const from = (address: string) => visitor(t, { 'X-Forwarded-For': address });

  it('sets a Secure __Host- cookie when PUBLIC_BASE_URL is https', async () => {
    const res = await from('192.0.2.1').signIn('alice@example.com', PASSWORD);
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie().find((line) => line.startsWith('__Host-console_session='))!;
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Domain=/i);
  });

  it('stops an address after 3 refused sign-ins (429 with Retry-After, even with the right password); others still sign in', async () => {
    const guesser = from('198.51.100.7');
    for (const email of ['x1@example.com', 'x2@example.com', 'x3@example.com']) expect((await guesser.signIn(email, 'guess-guess-guess')).status).toBe(401);
    const blocked = await guesser.signIn('bob@example.com', PASSWORD);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await blocked.text()).toMatch(/Too many failed sign-ins/);
    expect((await from('198.51.100.8').signIn('bob@example.com', PASSWORD)).status).toBe(303);
  });
});
