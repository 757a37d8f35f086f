// OAuth for installed apps, driven by a real OAuth client library (oauth4webapi) against the running
// server: discovery of its metadata, registration by the operator, a member's sign-in and consent, the
// code and refresh grants, the access token on /v1, revocation and everything that must refuse.
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startLibreTranslateStandIn } from '../support/standins/libreTranslateStandIn.js';
import type { StandInServer } from '../support/standins/standInServer.js';
import { freePort } from '../support/freePort.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';
import { FormBrowser, formFields } from './formBrowser.js';
import { openEventStream } from '../support/sse.js';
import { hashSecret } from '../../src/lib/ids.js';

const REDIRECT = 'https://helpdesk.example.com/oauth/callback';
const PASSWORD = 'correct horse battery staple';

describe(`OAuth apps (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  let as: oauth.AuthorizationServer;
  const insecure = { [oauth.allowInsecureRequests]: true };

  const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${t.url}${path}`, {
      method: init.method ?? (init.body ? 'POST' : 'GET'),
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });

  async function registerApp(body: Record<string, unknown> = {}) {
    const res = await admin('/admin/apps', { body: { name: 'Helpdesk Sync', redirect_uris: [REDIRECT], scopes: ['account:read', 'sessions:read', 'events:read'], ...body } });
    expect(res.status).toBe(201);
    return (await res.json()) as { client_id: string; client_secret: string | null; client_type: string; scopes: string[] };
  }

  /** A member signed in through the console's form. */
  async function signedIn(email: string): Promise<FormBrowser> {
    const browser = new FormBrowser(t.url);
    const form = await browser.request('/console/sign-in?return_to=%2Fconsole');
    expect(form.status).toBe(200);
    const done = await browser.request('/console/sign-in', { form: { ...formFields(await form.text()), email, password: PASSWORD } });
    expect(done.status).toBe(303);
    return browser;
  }

  /** The app's authorization URL with `params` (client_id and redirect_uri given unless overridden). */
  const authorizeUrl = (clientId: string, params: Record<string, string> = {}) =>
    `/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, ...params })}`;

  /** Goes through consent and answers the Location the browser is sent back to. */
  async function consent(browser: FormBrowser, url: string, decision: 'allow' | 'deny' = 'allow'): Promise<URL> {
    const page = await browser.request(url);
    expect(page.status).toBe(200);
    const decided = await browser.request('/oauth2/authorize', { form: { ...formFields(await page.text()), decision } });
    expect(decided.status).toBe(302);
    return new URL(decided.headers.get('location')!);
  }

  let member: FormBrowser;
  let translator: StandInServer & { url: string };
  beforeAll(async () => {
    translator = await startLibreTranslateStandIn({ apiKey: 'lt-key' });
    // The issuer the server names (its metadata, `iss`) is PUBLIC_BASE_URL: its real address here.
    const port = await freePort();
    t = await startTestServer({
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      APP_RATE_LIMIT_PER_MINUTE: '5',
      // Streams look at the (injected) clock this often for their access token's end.
      CREDENTIAL_EXPIRY_CHECK_MS: '50',
      LIBRETRANSLATE_URL: translator.url,
      LIBRETRANSLATE_API_KEY: 'lt-key',
    });
    orgId = await t.createOrg({ name: 'Acme Support', balance: 10 });
    const created = await admin(`/admin/orgs/${orgId}/members`, { body: { email: 'ana@acme.example', password: PASSWORD } });
    expect(created.status).toBe(201);
    // Discovered as a client would (RFC 8414): the metadata says `iss` is sent, so every
    // validateAuthResponse below also checks it (RFC 9207).
    const issuer = new URL(t.url);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
    member = await signedIn('ana@acme.example');
  });
  afterAll(async () => {
    await t?.stop();
    await translator?.close();
  });

  /** A confidential app approved with PKCE: its client, the code's Location and the verifier. */
  async function approvedCode(app: { client_id: string }, params: Record<string, string> = {}) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const back = await consent(member, authorizeUrl(app.client_id, { state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...params }));
    const client: oauth.Client = { client_id: app.client_id };
    return { client, verifier, callback: oauth.validateAuthResponse(as, client, back, state) };
  }

  /** A confidential app's first tokens (consent with PKCE, the code traded with Basic authentication). */
  async function connected(app: { client_id: string; client_secret: string | null }, params: Record<string, string> = {}) {
    const { client, verifier, callback } = await approvedCode(app, params);
    const auth = oauth.ClientSecretBasic(app.client_secret!);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT, verifier, insecure));
    return { client, auth, tokens };
  }

  const accountStatus = async (accessToken: string) => (await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${accessToken}` } })).status;

  /** A token request with exactly this form (oauth4webapi always sends redirect_uri). */
  const tokenRequest = (app: { client_id: string; client_secret: string | null }, form: Record<string, string>) =>
    fetch(`${t.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}` },
      body: new URLSearchParams(form),
    });

  it('a confidential app gets tokens through consent, PKCE and Basic authentication, and acts on /v1 in live mode with the granted scopes', async () => {
    const app = await registerApp();
    const { client, verifier, callback } = await approvedCode(app, { scope: 'account:read events:read' });
    const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret!), callback, REDIRECT, verifier, insecure);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'events:read account:read' }); // the canonical order
    expect(tokens.access_token).toMatch(/^spk_at_[0-9A-Za-z]{40}$/);
    expect(tokens.refresh_token).toMatch(/^spk_rt_[0-9A-Za-z]{40}$/);

    const account = await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ org_id: orgId, mode: 'live', scopes: ['events:read', 'account:read'] });
    const sessions = await fetch(`${t.url}/v1/sessions`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect(sessions.status).toBe(403);
    expect((await sessions.json()).detail).toBe('missing scope: sessions:read');

    const stored = await t.server.app.db('oauth_tokens').select('token_hash');
    expect(stored.map((row) => row.token_hash).join()).not.toContain(tokens.access_token);
  });

  it('a code works once: the replay is invalid_grant and revokes what the code issued', async () => {
    const app = await registerApp();
    const { client, verifier, callback } = await approvedCode(app);
    const auth = oauth.ClientSecretBasic(app.client_secret!);
    const first = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT, verifier, insecure));
    const replay = await oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT, verifier, insecure);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant', detail: expect.any(String), error_description: expect.any(String) });
    const refused = await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${first.access_token}` } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('refresh tokens rotate; presenting a used one revokes the whole connection', async () => {
    const app = await registerApp();
    const { client, verifier, callback } = await approvedCode(app);
    const auth = oauth.ClientSecretBasic(app.client_secret!);
    const first = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT, verifier, insecure));
    const refreshed = await oauth.refreshTokenGrantRequest(as, client, auth, first.refresh_token!, insecure);
    expect(refreshed.headers.get('cache-control')).toBe('no-store');
    const second = await oauth.processRefreshTokenResponse(as, client, refreshed);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${second.access_token}` } })).status).toBe(200);

    const reused = await oauth.refreshTokenGrantRequest(as, client, auth, first.refresh_token!, insecure);
    expect(reused.status).toBe(400);
    expect((await reused.json()).error).toBe('invalid_grant');
    expect((await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${second.access_token}` } })).status).toBe(401);
    const afterReuse = await oauth.refreshTokenGrantRequest(as, client, auth, second.refresh_token!, insecure);
    expect(afterReuse.status).toBe(400);
  });

  it('serves its metadata (RFC 8414) and names itself as iss on the authorization responses, success and error (RFC 9207)', async () => {
    const res = await fetch(`${t.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      issuer: t.url,
      authorization_endpoint: `${t.url}/oauth2/authorize`,
      token_endpoint: `${t.url}/oauth2/token`,
      revocation_endpoint: `${t.url}/oauth2/revoke`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['calls:read', 'calls:write', 'sessions:read', 'sessions:write', 'translate', 'events:read', 'account:read', 'webhooks:read', 'webhooks:write'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${t.url}/docs`,
    });

    const app = await registerApp();
    const state = oauth.generateRandomState();
    const allowed = await consent(member, authorizeUrl(app.client_id, { state }));
    expect(allowed.searchParams.get('iss')).toBe(t.url);
    // The client library refuses a response without iss, or with another server's.
    expect(oauth.validateAuthResponse(as, { client_id: app.client_id }, allowed, state).get('code')).toMatch(/^spk_ac_/);
    const forged = new URL(allowed);
    forged.searchParams.set('iss', 'https://mix-up.example');
    expect(() => oauth.validateAuthResponse(as, { client_id: app.client_id }, forged, state)).toThrow(/iss/);

    const denied = await consent(member, authorizeUrl(app.client_id, { state: 'd' }), 'deny');
    expect(Object.fromEntries(denied.searchParams)).toMatchObject({ error: 'access_denied', state: 'd', iss: t.url });
    const refused = new URL((await member.request(authorizeUrl(app.client_id, { scope: 'calls:write', state: 'r' }))).headers.get('location')!);
    expect(Object.fromEntries(refused.searchParams)).toMatchObject({ error: 'invalid_scope', state: 'r', iss: t.url });
  });

  it('a refused refresh (a wider scope, another app) leaves the refresh token unused and the connection intact: the next valid refresh works (RFC 6749 5.2)', async () => {
    const app = await registerApp();
    const { client, auth, tokens } = await connected(app, { scope: 'account:read' });
    const wider = await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, { ...insecure, additionalParameters: { scope: 'account:read sessions:read' } });
    expect(wider.status).toBe(400);
    expect(await wider.json()).toMatchObject({ error: 'invalid_scope' });
    const other = await registerApp();
    const byOther = await oauth.refreshTokenGrantRequest(as, { client_id: other.client_id }, oauth.ClientSecretBasic(other.client_secret!), tokens.refresh_token!, insecure);
    expect(byOther.status).toBe(400);
    expect((await byOther.json()).error).toBe('invalid_grant');
    const connection = await t.server.app.db('oauth_connections').where({ client_id: app.client_id }).first();
    expect(connection.revoked_at).toBeNull();
    expect(await t.server.app.db('oauth_tokens').where({ connection_id: connection.id, kind: 'refresh' }).whereNotNull('used_at')).toHaveLength(0);

    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure));
    expect(refreshed.scope).toBe('account:read');
    expect(await accountStatus(tokens.access_token)).toBe(200);
    expect(await accountStatus(refreshed.access_token)).toBe(200);
  });

  it('a refresh may narrow the scope of its access token; the next refresh without scope gets the whole grant again (RFC 6749 6)', async () => {
    const app = await registerApp();
    const { client, auth, tokens } = await connected(app, { scope: 'account:read sessions:read' });
    expect(tokens.scope).toBe('sessions:read account:read');
    const narrowed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, { ...insecure, additionalParameters: { scope: 'account:read' } }),
    );
    expect(narrowed.scope).toBe('account:read');
    expect((await fetch(`${t.url}/v1/sessions`, { headers: { Authorization: `Bearer ${narrowed.access_token}` } })).status).toBe(403);
    const whole = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, narrowed.refresh_token!, insecure));
    expect(whole.scope).toBe('sessions:read account:read');
    expect((await fetch(`${t.url}/v1/sessions`, { headers: { Authorization: `Bearer ${whole.access_token}` } })).status).toBe(200);
  });

  it('redirect_uri at the token endpoint (RFC 6749 4.1.3): not needed when the authorization request left it out, needed and exact when it named it; those refusals leave the code usable, a wrong PKCE verifier uses it up', async () => {
    const app = await registerApp();
    // Left out at the authorization request: the app's only registered redirect URI is used, and the
    // token request may leave it out too, or name that same one.
    for (const sendsIt of [false, true]) {
      const verifier = oauth.generateRandomCodeVerifier();
      const back = await consent(member, `/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.client_id, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })}`);
      expect(back.origin + back.pathname).toBe(REDIRECT);
      const code = back.searchParams.get('code')!;
      const res = await tokenRequest(app, { grant_type: 'authorization_code', code, code_verifier: verifier, ...(sendsIt ? { redirect_uri: REDIRECT } : {}) });
      expect(res.status, await res.clone().text()).toBe(200);
      expect((await res.json()).access_token).toMatch(/^spk_at_/);
    }

    // Named at the authorization request: the token request must repeat it exactly.
    const { verifier, callback } = await approvedCode(app);
    const code = callback.get('code')!;
    const missing = await tokenRequest(app, { grant_type: 'authorization_code', code, code_verifier: verifier });
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toBe('invalid_request');
    const other = await tokenRequest(app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: 'https://helpdesk.example.com/other' });
    expect(other.status).toBe(400);
    expect((await other.json()).error).toBe('invalid_grant');
    const exact = await tokenRequest(app, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT });
    expect(exact.status).toBe(200);

    // A wrong verifier is the one refusal that uses the code up: whoever holds a stolen code gets one try.
    const guessed = await approvedCode(app);
    const wrong = await tokenRequest(app, { grant_type: 'authorization_code', code: guessed.callback.get('code')!, code_verifier: oauth.generateRandomCodeVerifier(), redirect_uri: REDIRECT });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error).toBe('invalid_grant');
    const after = await tokenRequest(app, { grant_type: 'authorization_code', code: guessed.callback.get('code')!, code_verifier: guessed.verifier, redirect_uri: REDIRECT });
    expect(after.status).toBe(400);
    expect((await after.json()).error).toBe('invalid_grant');
  });

  it('the same code or refresh token twice at once: one request gets tokens, the other is a replay that revokes the connection', async () => {
    const app = await registerApp();
    const { client, verifier, callback } = await approvedCode(app);
    const auth = oauth.ClientSecretBasic(app.client_secret!);
    const exchanges = await Promise.all([0, 1].map(() => oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT, verifier, insecure)));
    expect(exchanges.map((res) => res.status).sort()).toEqual([200, 400]);
    const issued = await exchanges.find((res) => res.status === 200)!.json();
    expect(await accountStatus(issued.access_token)).toBe(401);

    const { tokens } = await connected(app);
    const refreshes = await Promise.all([0, 1].map(() => oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure)));
    expect(refreshes.map((res) => res.status).sort()).toEqual([200, 400]);
    const refused = await refreshes.find((res) => res.status === 400)!.json();
    expect(refused.error).toBe('invalid_grant');
    const rotated = await refreshes.find((res) => res.status === 200)!.json();
    expect(await accountStatus(rotated.access_token)).toBe(401);
    expect(await accountStatus(tokens.access_token)).toBe(401);
  });

  it('revocation (RFC 7009) stops every token of the connection and ends its open event stream at once; always 200', async () => {
    const app = await registerApp();
    const { client, verifier, callback } = await approvedCode(app);
    const auth = oauth.ClientSecretBasic(app.client_secret!);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT, verifier, insecure));
    const stream = await fetch(`${t.url}/v1/events`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();

    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.refresh_token!, insecure));
    // The stream ends without waiting for a heartbeat: read until done.
    for (;;) if ((await reader.read()).done) break;
    expect((await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    const unknown = await oauth.revocationRequest(as, client, auth, 'spk_rt_not_a_token', insecure);
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toEqual({});
  });

  it("an app's event stream ends when its access token expires; the refreshed token opens a new one", async () => {
    const app = await registerApp();
    const { client, auth, tokens } = await connected(app);
    const opened = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${tokens.access_token}` });
    expect(opened.status).toBe(200);
    const { expires_at } = await t.server.app.db('oauth_tokens').where({ token_hash: hashSecret(tokens.access_token), kind: 'access' }).first('expires_at');
    try {
      t.server.app.now = () => new Date(expires_at).getTime() + 1000;
      await opened.ended;
      expect(await accountStatus(tokens.access_token)).toBe(401);
      const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, insecure));
      const next = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${refreshed.access_token}` });
      expect(next.status).toBe(200);
      next.close();
    } finally {
      t.server.app.now = Date.now;
    }
  });

  it('a public app must use S256 PKCE and sends no secret; a missing verifier is invalid_grant', async () => {
    const app = await registerApp({ client_type: 'public', redirect_uris: [REDIRECT, 'http://127.0.0.1:8765/cb'] });
    expect(app.client_secret).toBeNull();
    const withoutPkce = await member.request(authorizeUrl(app.client_id, { state: 's1' }));
    expect(withoutPkce.status).toBe(302);
    const refusal = new URL(withoutPkce.headers.get('location')!);
    expect(refusal.origin + refusal.pathname).toBe(REDIRECT);
    expect(Object.fromEntries(refusal.searchParams)).toMatchObject({ error: 'invalid_request', state: 's1' });
    const plain = new URL((await member.request(authorizeUrl(app.client_id, { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }))).headers.get('location')!);
    expect(plain.searchParams.get('error')).toBe('invalid_request');

    const { client, verifier, callback } = await approvedCode(app);
    const noVerifier = await fetch(`${t.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: app.client_id, code: callback.get('code')!, redirect_uri: REDIRECT }),
    });
    expect(noVerifier.status).toBe(400);
    expect((await noVerifier.json()).error).toBe('invalid_grant');

    const again = await approvedCode(app);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), again.callback, REDIRECT, again.verifier, insecure));
    expect(tokens.access_token).toMatch(/^spk_at_/);
    expect(verifier).not.toBe(again.verifier);
  });

  it('an unknown app or redirect URI gets an error page and never a redirect; other problems go back to the app', async () => {
    const app = await registerApp();
    for (const url of [authorizeUrl('app_unknown0000000000'), authorizeUrl(app.client_id, { redirect_uri: 'https://evil.example/cb' })]) {
      const res = await member.request(url);
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    }
    const anonymous = await new FormBrowser(t.url).request(authorizeUrl('app_unknown0000000000'));
    expect(anonymous.status).toBe(400);

    const scope = new URL((await member.request(authorizeUrl(app.client_id, { scope: 'calls:write', state: 'x' }))).headers.get('location')!);
    expect(Object.fromEntries(scope.searchParams)).toMatchObject({ error: 'invalid_scope', state: 'x' });
    const type = new URL((await member.request(authorizeUrl(app.client_id, { response_type: 'token' }))).headers.get('location')!);
    expect(type.searchParams.get('error')).toBe('unsupported_response_type');
  });

  it('the consent page names the app, the organization and each scope; Deny goes back with access_denied', async () => {
    const app = await registerApp({ name: 'Ticket <Bridge>' });
    const page = await member.request(authorizeUrl(app.client_id, { scope: 'account:read events:read' }));
    const html = await page.text();
    expect(html).toContain('Ticket &lt;Bridge&gt;');
    expect(html).toContain('Acme Support');
    expect(html).toContain("Read the organization's account and balance".replace("'", '&#39;'));
    expect(html).toContain('Follow the live event stream');
    expect(html).not.toContain('Read support sessions');
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' https://helpdesk.example.com");
    const back = await consent(member, authorizeUrl(app.client_id, { state: 'st' }), 'deny');
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'access_denied', state: 'st' });
  });

  it('a visitor not signed in is sent to sign in and comes back to the consent page', async () => {
    const app = await registerApp();
    const visitor = new FormBrowser(t.url);
    const url = authorizeUrl(app.client_id, { state: 'abc' });
    const first = await visitor.request(url);
    expect(first.status).toBe(303);
    const signIn = new URL(first.headers.get('location')!, t.url);
    expect(signIn.pathname).toBe('/console/sign-in');
    const form = await visitor.request(signIn.pathname + signIn.search);
    const done = await visitor.request('/console/sign-in', { form: { ...formFields(await form.text()), email: 'ana@acme.example', password: PASSWORD } });
    expect(done.status).toBe(303);
    const back = new URL(done.headers.get('location')!, t.url);
    expect(back.pathname + back.search).toBe(url);
    expect((await visitor.request(url)).status).toBe(200);
  });

  it('the consent form needs the session CSRF token', async () => {
    const app = await registerApp();
    const page = await member.request(authorizeUrl(app.client_id));
    const fields = formFields(await page.text());
    const forged = await member.request('/oauth2/authorize', { form: { ...fields, csrf_token: 'forged', decision: 'allow' } });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
    expect(await t.server.app.db('oauth_connections').where({ client_id: app.client_id })).toHaveLength(0);
  });

  it('client authentication: a wrong Basic secret is 401 with WWW-Authenticate, a wrong form secret 400 invalid_client; an unreadable form is invalid_request', async () => {
    const app = await registerApp();
    const { client, verifier, callback } = await approvedCode(app);
    const basic = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic('spk_cs_wrong'), callback, REDIRECT, verifier, insecure);
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await basic.json()).error).toBe('invalid_client');
    const form = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost('spk_cs_wrong'), callback, REDIRECT, verifier, insecure);
    expect(form.status).toBe(400);
    expect((await form.json()).error).toBe('invalid_client');
    const noGrant = await fetch(`${t.url}/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'client_id=x' });
    expect(noGrant.status).toBe(400);
    const body = await noGrant.json();
    expect(body.error).toBe('invalid_request');
    expect(body.detail).toBe(body.error_description);
    // The right secret in the form still works: the failed attempts did not use the code up.
    const ok = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost(app.client_secret!), callback, REDIRECT, verifier, insecure);
    expect(ok.status).toBe(200);
  });

  it('an expired code is invalid_grant', async () => {
    const app = await registerApp();
    const { client, verifier, callback } = await approvedCode(app);
    await t.server.app.db('oauth_codes').update({ expires_at: new Date(Date.now() - 1000) });
    const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret!), callback, REDIRECT, verifier, insecure);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe('invalid_grant');
  });

  it('each connection has its own rate limit, apart from the organization keys; deleting the app stops its tokens', async () => {
    const app = await registerApp();
    const { client, verifier, callback } = await approvedCode(app);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret!), callback, REDIRECT, verifier, insecure));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${tokens.access_token}` } })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const { key } = await t.createKey(orgId, 'live');
    expect((await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);

    expect((await admin(`/admin/apps/${app.client_id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    expect((await admin(`/admin/apps/${app.client_id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await admin('/admin/apps/app_unknown0000000000', { method: 'DELETE' })).status).toBe(404);
  });

  it('events made by an app name it; those made with an API key do not', async () => {
    const app = await registerApp({ scopes: ['sessions:write', 'sessions:read'] });
    const { client, verifier, callback } = await approvedCode(app);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret!), callback, REDIRECT, verifier, insecure));
    const create = (credential: string) =>
      fetch(`${t.url}/v1/sessions`, { method: 'POST', headers: { Authorization: `Bearer ${credential}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ agent_language: 'en' }) });
    const byApp = await create(tokens.access_token);
    expect(byApp.status).toBe(201);
    const { key } = await t.createKey(orgId, 'live');
    const byKey = await create(key);
    const events = await t.server.app.db('events').whereIn('session_id', [(await byApp.json()).id, (await byKey.json()).id]).where({ type: 'session.created' }).orderBy('seq');
    expect(events.map((row) => [row.app_id, typeof row.payload === 'string' ? JSON.parse(row.payload).app_id : row.payload.app_id])).toEqual([
      [app.client_id, app.client_id],
      [null, undefined],
    ]);
  });

  it('what an app does to sessions and calls names it: stored events, a charged message and its ledger row, typing; the same done with a key names none', async () => {
    /** Tokens of a newly registered app (each app has its own connection, and so its own 5 requests a minute). */
    const appTokens = async (scopes: string[]) => {
      const app = await registerApp({ scopes });
      const { client, verifier, callback } = await approvedCode(app);
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret!), callback, REDIRECT, verifier, insecure));
      return { clientId: app.client_id, token: tokens.access_token };
    };
    const call = async (credential: string, path: string, body: unknown) => {
      const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${credential}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300);
      return res.status === 204 ? undefined : ((await res.json()) as { id: string | number });
    };
    const charging = await appTokens(['sessions:write', 'calls:write', 'events:read']);
    const stream = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${charging.token}` });
    expect(stream.status).toBe(200);
    try {
      // A message that needs translating (charged, in a transaction), typing (announced, not stored), a call.
      const translated = await call(charging.token, '/v1/sessions', { agent_language: 'en', customer_language: 'fi' });
      const message = await call(charging.token, `/v1/sessions/${translated!.id}/messages`, { sender: 'agent', text: 'Your parcel left the warehouse this morning.' });
      await call(charging.token, `/v1/sessions/${translated!.id}/typing`, { sender: 'agent' });
      const madeCall = await call(charging.token, '/v1/calls', { agent_language: 'en', customer_language: 'fi' });
      // A message with nothing to translate (one statement, no transaction), by another app and by a key.
      const plain = await appTokens(['sessions:write']);
      const untranslated = await call(plain.token, '/v1/sessions', { agent_language: 'en', customer_language: 'en' });
      await call(plain.token, `/v1/sessions/${untranslated!.id}/messages`, { sender: 'agent', text: 'Hello' });
      const { key } = await t.createKey(orgId, 'live');
      await call(key, `/v1/sessions/${untranslated!.id}/messages`, { sender: 'agent', text: 'Hello again' });

      const typing = await stream.waitFor((event) => event.event === 'session.typing');
      expect(typing.data.app_id).toBe(charging.clientId);
      const stored = await t.server.app.db('events').whereIn('session_id', [translated!.id, untranslated!.id]).orWhere({ call_id: madeCall!.id }).orderBy('seq');
      const appOf = (row: { app_id: string | null; payload: unknown }) => [row.app_id, (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload).app_id];
      expect(stored.map((row) => [row.type, ...appOf(row)])).toEqual([
        ['session.created', charging.clientId, charging.clientId],
        ['message.created', charging.clientId, charging.clientId],
        ['call.created', charging.clientId, charging.clientId],
        ['session.created', plain.clientId, plain.clientId],
        ['message.created', plain.clientId, plain.clientId],
        ['message.created', null, undefined],
      ]);
      const ledger = await t.server.app.db('ledger_entries').where({ reference: `message ${message!.id}` });
      expect(ledger.map((row) => [row.kind, row.app_id])).toEqual([['text', charging.clientId]]);
    } finally {
      stream.close();
    }
  });

  it("what an app's request charges is billed to the organization, and the ledger row names the app", async () => {
    const app = await registerApp({ scopes: ['translate'] });
    const { client, verifier, callback } = await approvedCode(app);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret!), callback, REDIRECT, verifier, insecure));
    const translated = await fetch(`${t.url}/v1/translate`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tokens.access_token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'Hello there, how are you?', source: 'en', target: 'fi' }),
    });
    expect(translated.status).toBe(200);
    const ledger = await (await admin(`/admin/orgs/${orgId}/ledger?limit=1`)).json();
    expect(ledger[0]).toMatchObject({ mode: 'live', kind: 'text', app_id: app.client_id });
  });

  it('registration refuses redirect URIs that are not https or loopback http, and fragments', async () => {
    const res = await admin('/admin/apps', { body: { name: 'Bad', redirect_uris: ['http://example.com/cb', 'https://ok.example/cb#x'], scopes: ['translate'] } });
    expect(res.status).toBe(422);
    const { detail } = await res.json();
    expect(detail.map((issue: { loc: unknown[] }) => issue.loc)).toEqual([['body', 'redirect_uris', 0], ['body', 'redirect_uris', 1]]);
  });
});
