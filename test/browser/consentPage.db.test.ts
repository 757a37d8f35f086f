// The OAuth consent page (GET /oauth2/authorize) and its error page in chromium, on a phone and a
// desktop screen: axe-core finds no serious or critical violation, nothing is wider than the screen, and every
// stylesheet it links arrives.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, PAGE_WAIT_MS } from '../support/browser.js';
import { addMember, PASSWORD } from '../support/consoleVisitor.js';
import { missingAssets, seriousAxeViolations } from '../support/pageChecks.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

const REDIRECT = 'https://helpdesk.example.com/oauth/callback';
const EMAIL = 'consent@pages.example';

describe('the OAuth consent page in chromium', () => {
  let t: TestServer;
  let browser: Browser;
  let clientId: string;
  beforeAll(async () => {
    t = await startTestServer();
    const orgId = await t.createOrg({ name: 'Consent Pages Org' });
    await addMember(t, orgId, EMAIL);
    const registered = await fetch(`${t.url}/admin/apps`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Ticket Bridge', redirect_uris: [REDIRECT], scopes: ['account:read', 'events:read'] }),
    });
    expect(registered.status).toBe(201);
    clientId = (await registered.json()).client_id;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  for (const [viewport, colorScheme] of [
    [{ width: 375, height: 667 }, 'light'],
    [{ width: 1280, height: 800 }, 'dark'],
  ] as const) {
    it(`at ${viewport.width} px, ${colorScheme}: the consent page and its error page pass axe-core and fit the screen`, async () => {
      const context = await browser.newContext({ viewport, colorScheme });
      const page = await context.newPage();
      const missing = missingAssets(page);
      const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, scope: 'account:read events:read', state: 's1' });
      await page.goto(`${t.url}/oauth2/authorize?${query}`);
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/oauth2/authorize', { timeout: PAGE_WAIT_MS });
      await page.getByRole('button', { name: 'Allow' }).waitFor({ timeout: PAGE_WAIT_MS });
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);

      await page.goto(`${t.url}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'app_unknown', redirect_uri: REDIRECT })}`);
      await page.getByRole('heading', { level: 1 }).waitFor({ timeout: PAGE_WAIT_MS });
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(missing).toEqual([]);
      await context.close();
    });
  }
});
