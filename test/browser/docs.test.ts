import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/browser.js';
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
    await page.goto(`${t.url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    const contract = await (await fetch(`${t.url}/openapi.json`)).json();
    const operations = Object.values(contract.paths).flatMap((item) => Object.keys(item as object)).length;
    expect(await page.locator('.opblock').count()).toBe(operations);
    expect(await page.locator('.title').first().textContent()).toContain('Live-Interpretation and Support-Chat API');
    expect(foreign.filter((url) => !url.startsWith('data:'))).toEqual([]);
  });
});
