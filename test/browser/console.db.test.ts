// The console's sign-in in chromium on a phone-sized screen: the form by its labels, a wrong password,
// then the right one, the organization's page, and sign-out.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, recordCspViolations } from '../support/browser.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

describe('console sign-in in chromium', () => {
  let t: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestServer();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('signs in through the form on a phone, shows the organization, and signs out', async () => {
    const orgId = await t.createOrg({ name: 'Phone Org' });
    const password = 'phone-console-password-42';
    const added = await fetch(`${t.url}/admin/orgs/${orgId}/members`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'phone@example.com', password }),
    });
    expect(added.status).toBe(201);

    const context = await browser.newContext({ viewport: { width: 375, height: 667 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const foreign: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(t.url)) foreign.push(request.url());
    });
    const blocked = recordCspViolations(page);

    await page.goto(`${t.url}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    // Nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    const button = page.getByRole('button', { name: 'Sign in' });
    const box = (await button.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(375);

    await page.getByLabel('Email').fill('phone@example.com');
    await page.getByLabel('Password').fill('a-wrong-password-here');
    await button.tap();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong email or password.');

    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).tap();
    await page.waitForURL(`${t.url}/console`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Phone Org');
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === 'console_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    // The session cookie is out of the page's reach.
    expect(await page.evaluate(() => document.cookie)).not.toContain('console_session');

    await page.getByRole('button', { name: 'Sign out' }).tap();
    await page.waitForURL(`${t.url}/console/sign-in`);
    await page.goto(`${t.url}/console`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');

    expect(foreign).toEqual([]);
    expect(blocked).toEqual([]);
    await context.close();
  });
});
