// The console's pages in chromium on a phone-sized screen, against the running server: a member creates
// a key, copies it, uses it, sees the usage and the balance, and revokes it; switches to test data and
// watches events arrive live; approves an app through sign-in and consent and revokes it again; adds a
// webhook endpoint, copies its signing secret, sees it listed and deletes it.
import * as oauth from 'oauth4webapi';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { launchChromium, PAGE_WAIT_MS, recordCspViolations } from '../support/browser.js';
import { addMember, PASSWORD } from '../support/consoleVisitor.js';
import { startLibreTranslateStandIn } from '../support/standins/libreTranslateStandIn.js';
import type { StandInServer } from '../support/standins/standInServer.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

const PHONE = { viewport: { width: 375, height: 667 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const REDIRECT = 'https://helpdesk.example.com/oauth/callback';
const EMAIL = 'owner@console.example';

describe(`console pages in chromium (${backendName})`, () => {
  let t: TestServer;
  let translator: StandInServer & { url: string };
  let browser: Browser;
  let orgId: string;
  beforeAll(async () => {
    translator = await startLibreTranslateStandIn({ apiKey: 'lt-console' });
    t = await startTestServer({ LIBRETRANSLATE_URL: translator.url, LIBRETRANSLATE_API_KEY: 'lt-console' });
    orgId = await t.createOrg({ name: 'Console Pages Org', balance: 10, currency: 'EUR', text_rate_per_million_characters: 1_000 });
    await addMember(t, orgId, EMAIL);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await translator?.close();
  });

  const api = (path: string, token: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${t.url}${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });

  /** A phone whose every request stays on this server (`foreign` collects any other) and whose pages CSP never blocks. */
  async function phone(): Promise<{ context: BrowserContext; page: Page; foreign: string[]; blocked: string[] }> {
    const context = await browser.newContext({ ...PHONE, permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const foreign: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(t.url)) foreign.push(request.url());
    });
    return { context, page, foreign, blocked: recordCspViolations(page) };
  }

  async function signIn(page: Page): Promise<void> {
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).tap();
  }

  /** Taps what submits a form and waits for the page it loads (which may have the same URL). */
  const tapAndLoad = async (page: Page, target: ReturnType<Page['getByRole']>) => {
    await Promise.all([page.waitForEvent('load'), target.tap()]);
  };

  /** Nothing on the page is wider than the phone's screen. */
  const fitsThePhone = async (page: Page) =>
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.viewport.width);

  it('creates a live key with chosen scopes, copies it once, uses it, sees the usage and the balance, revokes it and it stops working', async () => {
    const { context, page, foreign, blocked } = await phone();
    await page.goto(`${t.url}/console/keys`);
    await signIn(page);
    await page.waitForURL(`${t.url}/console/keys`);
    await fitsThePhone(page);
    expect(await page.getByText('No live keys yet.').isVisible()).toBe(true);

    // Live is the mode in view; keep two scopes only.
    expect(await page.getByRole('radio', { name: 'Live' }).isChecked()).toBe(true);
    for (const box of await page.getByRole('checkbox').all()) {
      const scope = await box.getAttribute('value');
      if (scope !== 'translate' && scope !== 'account:read') await box.uncheck();
    }
    await page.getByRole('button', { name: 'Create key' }).tap();
    const key = (await page.locator('#new-key').textContent())!;
    expect(key).toMatch(/^spk_live_/);
    expect(await page.getByText('Copy it now: it is not shown again.').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Copy' }).tap();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await fitsThePhone(page);

    // The key works with exactly the scopes chosen.
    const account = await api('/v1/account', key);
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ org_id: orgId, mode: 'live', scopes: ['translate', 'account:read'] });
    expect((await api('/v1/sessions', key)).status).toBe(403);
    const text = 'Good morning, how can I help you today?';
    const translated = await api('/v1/translate', key, { body: { text, target: 'fi', source: 'en' } });
    expect(translated.status).toBe(200);

    // Shown once: the page again lists the key by its id, never its secret.
    await page.goto(`${t.url}/console/keys`);
    expect(await page.content()).not.toContain(key);

    // The overview: the balance after the charge, and the characters in the chart and its totals.
    await page.getByRole('link', { name: 'Overview' }).tap();
    await page.waitForURL(`${t.url}/console`);
    const ledger = await t.server.app.db('ledger_entries').where({ org_id: orgId, kind: 'text' });
    expect(ledger).toHaveLength(1);
    const balance = (10_000_000 + Number(ledger[0].amount_micros)) / 1_000_000;
    expect(await page.getByTestId('balance').textContent()).toBe(new Intl.NumberFormat('en', { style: 'currency', currency: 'EUR', maximumFractionDigits: 6 }).format(balance));
    const textChart = page.locator('figure[data-kind="text"] svg');
    expect(await textChart.getAttribute('aria-label')).toContain(`${text.length} characters in all`);
    expect(await page.locator('figure[data-kind="text"] rect.bar').count()).toBe(1);
    expect(await page.locator('figure[data-kind="call"] rect.bar').count()).toBe(0);
    expect(await page.locator('tr[data-kind="text"]').textContent()).toContain(`${text.length} characters`);
    await fitsThePhone(page);

    // Revoked in the console: refused at once.
    await page.getByRole('link', { name: 'API keys' }).tap();
    await page.waitForURL(`${t.url}/console/keys`);
    const keyId = (await t.server.app.db('api_keys').where({ org_id: orgId, mode: 'live' }).first()).id;
    // Asked again first, naming what stops working.
    await page.locator('tr', { hasText: keyId }).getByText('Revoke…').tap();
    expect(await page.locator('tr', { hasText: keyId }).textContent()).toContain('Every request and event stream with it is refused');
    await tapAndLoad(page, page.getByRole('button', { name: `Revoke ${keyId}` }));
    expect(page.url()).toBe(`${t.url}/console/keys`);
    expect(await page.locator('tr', { hasText: keyId }).textContent()).toContain('Revoked');
    expect((await api('/v1/account', key)).status).toBe(401);

    expect(foreign).toEqual([]);
    expect(blocked).toEqual([]);
    await context.close();
  });

  it('switches to test data like a test-mode toggle, and shows sessions, calls and live events of that mode only', async () => {
    const { context, page, foreign, blocked } = await phone();
    await page.goto(`${t.url}/console/events`);
    await signIn(page);
    await page.waitForURL(`${t.url}/console/events`);
    const toggle = page.getByRole('switch', { name: 'Test mode' });
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    await tapAndLoad(page, toggle);
    expect(page.url()).toBe(`${t.url}/console/events`);
    expect(await page.getByRole('switch', { name: 'Test mode' }).getAttribute('aria-checked')).toBe('true');
    expect(await page.getByRole('status').first().textContent()).toContain('Test data');
    await expect.poll(() => page.locator('#events-status').textContent(), { timeout: PAGE_WAIT_MS }).toContain('Live');

    // A test key made elsewhere acts; its events appear here as they happen.
    const { key } = await t.createKey(orgId, 'test');
    const created = await api('/v1/sessions', key, { body: { agent_language: 'en', customer_language: 'es', external_id: 'ticket-77' } });
    expect(created.status).toBe(201);
    const session = await created.json();
    await expect.poll(() => page.locator('#events .event-type').allTextContents(), { timeout: PAGE_WAIT_MS }).toContain('session.created');
    await page.locator('#events summary').first().tap();
    expect(await page.locator('#events pre').first().textContent()).toContain(session.id);
    // An event of live mode does not show among the test events.
    const live = await t.createKey(orgId, 'live');
    expect((await api('/v1/calls', live.key, { body: { agent_language: 'en' } })).status).toBe(201);
    const call = await (await api('/v1/calls', key, { body: { agent_language: 'en', customer_language: 'de' } })).json();
    await expect.poll(() => page.locator('#events .event-type').allTextContents(), { timeout: PAGE_WAIT_MS }).toContain('call.created');
    expect(await page.locator('#events .event-type').allTextContents()).toEqual(['call.created', 'session.created']);
    await fitsThePhone(page);

    // Lists of the mode in view, with a status filter.
    await page.getByRole('link', { name: 'Sessions' }).tap();
    await page.waitForURL(`${t.url}/console/sessions`);
    expect(await page.locator('tr', { hasText: session.id }).textContent()).toContain('ticket-77');
    await page.getByLabel('Status').selectOption('closed');
    await page.getByRole('button', { name: 'Filter' }).tap();
    await page.waitForURL(`${t.url}/console/sessions?status=closed`);
    expect(await page.getByText('No sessions.').isVisible()).toBe(true);
    await page.getByRole('link', { name: 'Calls' }).tap();
    await page.waitForURL(`${t.url}/console/calls`);
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody tr').textContent()).toContain(call.id);
    await fitsThePhone(page);

    // Back to live: the live call, not the test one.
    await tapAndLoad(page, page.getByRole('switch', { name: 'Test mode' }));
    expect(page.url()).toBe(`${t.url}/console/calls`);
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody tr').textContent()).not.toContain(call.id);

    expect(foreign).toEqual([]);
    expect(blocked).toEqual([]);
    await context.close();
  });

  it('an app approved through sign-in and consent in chromium is listed with its scopes, and revoking it stops its tokens', async () => {
    const registered = await fetch(`${t.url}/admin/apps`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Ticket Bridge', redirect_uris: [REDIRECT], scopes: ['account:read', 'events:read'] }),
    });
    expect(registered.status).toBe(201);
    const app = await registered.json();
    // The issuer is PUBLIC_BASE_URL (its default here), which the answer names as `iss`.
    const as: oauth.AuthorizationServer = { issuer: t.server.app.config.publicBaseUrl, token_endpoint: `${t.url}/oauth2/token` };
    const client: oauth.Client = { client_id: app.client_id };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorize = `${t.url}/oauth2/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: REDIRECT,
      scope: 'account:read events:read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    })}`;

    const { context, page, blocked } = await phone();
    // The app's own site is not reachable from here: the browser's arrival there is caught instead.
    let callback: URL | null = null;
    await context.route('https://helpdesk.example.com/**', (route) => {
      callback = new URL(route.request().url());
      return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the app' });
    });
    await page.goto(authorize);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await signIn(page);
    await page.waitForURL((url) => url.pathname === '/oauth2/authorize');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Allow Ticket Bridge to use Console Pages Org?');
    await fitsThePhone(page);
    await page.getByRole('button', { name: 'Allow' }).tap();
    await expect.poll(() => callback, { timeout: PAGE_WAIT_MS }).not.toBeNull();

    const params = oauth.validateAuthResponse(as, client, callback!, state);
    const granted = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.client_secret), params, REDIRECT, verifier, {
      [oauth.allowInsecureRequests]: true,
    });
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, granted);
    expect((await api('/v1/account', tokens.access_token)).status).toBe(200);

    await page.goto(`${t.url}/console/apps`);
    const row = page.locator('tr', { hasText: 'Ticket Bridge' });
    expect(await row.textContent()).toContain('account:read');
    expect(await row.textContent()).toContain('events:read');
    await fitsThePhone(page);
    await page.getByText('Revoke…').tap();
    await tapAndLoad(page, page.getByRole('button', { name: 'Revoke Ticket Bridge' }));
    expect(page.url()).toBe(`${t.url}/console/apps`);
    expect(await page.getByText('No apps are connected.').isVisible()).toBe(true);
    expect((await api('/v1/account', tokens.access_token)).status).toBe(401);

    expect(blocked).toEqual([]);
    await context.close();
  });

  it('adds a webhook endpoint for two event types, copies its signing secret once, sees it listed, and deletes it after confirming', async () => {
    const { context, page, foreign, blocked } = await phone();
    await page.goto(`${t.url}/console/webhooks`);
    await signIn(page);
    await page.waitForURL(`${t.url}/console/webhooks`);
    expect(await page.getByText('No live webhook endpoints yet.').isVisible()).toBe(true);

    await page.getByLabel('URL').fill('https://hooks.example.com/console');
    await page.getByLabel('Description').fill('Ticket sync');
    expect(await page.getByRole('radio', { name: 'All events' }).isChecked()).toBe(true);
    // Checking a type chooses "only the types checked" by itself.
    await page.getByRole('checkbox', { name: 'call.ended' }).check();
    expect(await page.getByRole('radio', { name: 'Only the types checked' }).isChecked()).toBe(true);
    await page.getByRole('checkbox', { name: 'session.closed' }).check();
    await tapAndLoad(page, page.getByRole('button', { name: 'Add endpoint' }));

    const secret = (await page.locator('#new-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    expect(await page.getByText('Copy it now: it is not shown again.').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Copy' }).tap();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    const endpoint = page.locator('section.endpoint', { hasText: 'https://hooks.example.com/console' });
    for (const text of ['call.ended session.closed', 'Ticket sync', 'Enabled', 'No deliveries yet.']) expect(await endpoint.textContent()).toContain(text);
    await fitsThePhone(page);

    // The form led to a GET (post/redirect/get): a reload asks for the page again, adds no second endpoint
    // with a new secret, and no longer shows this one.
    const methods: string[] = [];
    page.on('request', (request) => methods.push(request.method()));
    await page.reload();
    expect(methods[0]).toBe('GET');
    expect(await page.content()).not.toContain(secret);
    expect(await t.server.app.db('webhook_endpoints').where({ org_id: orgId })).toHaveLength(1);

    // Shown once: listed again without its secret.
    await tapAndLoad(page, page.getByRole('link', { name: 'Webhooks' }));
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('section.endpoint').count()).toBe(1);

    const [row] = await t.server.app.db('webhook_endpoints').where({ org_id: orgId });
    expect(row).toMatchObject({ mode: 'live', url: 'https://hooks.example.com/console', enabled_events: ['call.ended', 'session.closed'] });
    await page.getByText('Delete…').tap();
    await tapAndLoad(page, page.getByRole('button', { name: `Delete endpoint ${row.id}` }));
    expect(await page.getByText('No live webhook endpoints yet.').isVisible()).toBe(true);
    // Reloaded after the delete: the same page, nothing sent again.
    methods.length = 0;
    await page.reload();
    expect(await page.getByText('No live webhook endpoints yet.').isVisible()).toBe(true);
    expect(methods.filter((method) => method !== 'GET')).toEqual([]);

    expect(foreign).toEqual([]);
    expect(blocked).toEqual([]);
    await context.close();
  });
});
