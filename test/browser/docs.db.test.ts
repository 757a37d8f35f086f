import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, PAGE_WAIT_MS, recordCspViolations } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('the API reference page in chromium', () => {
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

  it('renders every operation of the contract from local assets only', async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(t.url)) foreign.push(request.url());
    });
    const blocked = recordCspViolations(page);
    const answer = await page.goto(`${t.url}/docs`);
    // Only this origin may frame the reference; it renders under its own policy with nothing blocked.
    expect(answer!.headers()['content-security-policy']).toMatch(/default-src 'self'.*script-src 'self'.*frame-ancestors 'self'/);
    expect(answer!.headers()['x-content-type-options']).toBe('nosniff');
    await page.waitForSelector('.opblock', { timeout: PAGE_WAIT_MS });
    const contract = await (await fetch(`${t.url}/openapi.json`)).json();
    const operations = Object.values(contract.paths).flatMap((item) => Object.keys(item as object)).length;
    expect(await page.locator('.opblock').count()).toBe(operations);
    expect(await page.locator('.title').first().textContent()).toContain('Live-Interpretation and Support-Chat API');
    expect(foreign.filter((url) => !url.startsWith('data:'))).toEqual([]);
    expect(blocked).toEqual([]);
  });
});
