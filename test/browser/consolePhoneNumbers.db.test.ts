// The console's phone numbers in chromium on a 390 px screen: the numbers of the mode in view with their
// Voice URL, copied by tapping and by keyboard; no serious or critical axe-core violation.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { launchChromium, recordCspViolations } from '../support/browser.js';
import { addMember, PASSWORD } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const EMAIL = 'numbers@console.example';
const PUBLIC = 'https://calls.example.com';

describe(`console: phone numbers in chromium (${backendName})`, () => {
  let t: TestServer;
  let browser: Browser;
  let live: string;
  beforeAll(async () => {
    t = await startTestServer({ PUBLIC_BASE_URL: PUBLIC });
    const orgId = await t.createOrg({ name: 'Numbers Org', balance: 10 });
    await t.setTelephony(orgId, { account_sid: `AC${'1'.repeat(32)}`, auth_token: 'the-auth-token', from_number: '+15005550006' });
    await addMember(t, orgId, EMAIL);
    live = (await t.createKey(orgId, 'live')).key;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  const register = async (body: Record<string, unknown>) => {
    const res = await fetch(`${t.url}/v1/phone_numbers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${live}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_language: 'en', ...body }),
    });
    expect(res.status).toBe(201);
    return res.json();
  };

  it('lists the numbers with their Voice URL to copy, fits the screen, works by keyboard and passes axe-core', async () => {
    const support = await register({ number: '+14155550100', mode: 'new_call', customer_languages: ['es', 'fr'] });
    const pins = await register({ number: '+14155550101', mode: 'pin' });
    const context = await browser.newContext({ ...PHONE, permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const blocked = recordCspViolations(page);
    await page.goto(`${t.url}/console/phone-numbers`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).tap();
    await page.waitForURL(`${t.url}/console/phone-numbers`);

    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Phone numbers');
    expect(await page.getByRole('link', { name: 'Phone numbers' }).getAttribute('aria-current')).toBe('page');
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    // Newest first.
    expect(await rows.nth(0).textContent()).toContain('+14155550101');
    expect(await rows.nth(0).textContent()).toContain('Callers join with a PIN');
    expect(await rows.nth(0).textContent()).toContain("From the caller’s country");
    expect(await rows.nth(1).textContent()).toContain('A new call for each caller');
    expect(await rows.nth(1).textContent()).toContain('es, fr');
    expect(await page.locator(`#voice-url-${support.id}`).textContent()).toBe(`${PUBLIC}/twilio/voice/${support.id}`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.viewport.width);

    // Evaluated by the browser's tooling, as a script tag would be refused by the page's CSP.
    await page.evaluate(await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));
    const violations = await page.evaluate(async () => {
      const result = await (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }).axe.run();
      return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
    });
    expect(violations).toEqual([]);

    const copySupport = page.getByRole('button', { name: 'Copy', exact: true }).and(page.locator(`[data-copy="voice-url-${support.id}"]`));
    expect(await copySupport.getAttribute('aria-describedby')).toBe(`number-${support.id}`);
    await copySupport.tap();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(support.voice_url);

    // By keyboard: focus the other number's copy button and press Enter.
    const copyPin = page.locator(`[data-copy="voice-url-${pins.id}"]`);
    await copyPin.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(pins.voice_url);


    // The test data has none.
    await page.getByRole('switch', { name: 'Test mode' }).tap();
    await page.waitForURL(`${t.url}/console/phone-numbers`);
    await expect.poll(() => page.getByText('No phone numbers in this mode.', { exact: false }).count()).toBe(1);
    expect(blocked).toEqual([]);
    await context.close();
  });
});
