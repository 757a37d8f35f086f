// The console in the reader's language (Accept-Language) in chromium on a 390 px phone: every page,
// from sign-in to a call's page, in Spanish and in Arabic (right to left), has no English word outside
// the organization's own data, fits the screen and passes axe-core with no serious or critical violation.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { launchChromium, phonePageProblems, recordCspViolations } from '../support/browser.js';
import { addMember, PASSWORD } from '../support/consoleVisitor.js';
import { axeInEveryPage, englishWordsOn } from '../support/pageChecks.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const EMAIL = 'ops@zylo.example';
/** Data, not words of the page: ids, key prefixes, times, event type names, JSON, what a charge was for, an example URL. */
const DATA = ['code', 'time', 'pre', '.event-type', 'option[value*="."]', 'details summary', '.reference', '#webhook-url'];

describe(`console in the reader's language in chromium (${backendName})`, () => {
  let t: TestServer;
  let browser: Browser;
  let call: { id: string };
  let session: { id: string };
  beforeAll(async () => {
    t = await startTestServer();
    const orgId = await t.createOrg({ name: 'Zylo Oy', balance: 10, currency: 'EUR' });
    await addMember(t, orgId, EMAIL);
    const { key } = await t.createKey(orgId, 'live');
    const api = async (path: string, body: unknown) =>
      (await fetch(`${t.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();
    session = await api('/v1/sessions', { agent_language: 'fi', customer_language: 'sv', agent_name: 'Aino', customer_name: 'Matti' });
    call = await api('/v1/calls', { agent_language: 'fi', customer_language: 'sv', agent_name: 'Aino', customer_name: 'Matti' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  const checked = async (page: Page, language: string) => {
    const where = `${language} ${page.url()}`;
    expect(await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir]), where).toEqual([language, language === 'ar' ? 'rtl' : 'ltr']);
    expect(await englishWordsOn(page, language, DATA), where).toEqual([]);
    // axe-core's serious violations among them: axe runs once per page, not twice.
    expect(await phonePageProblems(page, PHONE.viewport.width), where).toEqual([]);
  };

  for (const language of ['es', 'ar']) {
    it(`shows every console page in ${language}`, async () => {
      const context = await browser.newContext({ ...PHONE, locale: language, extraHTTPHeaders: { 'Accept-Language': `${language};q=0.9, en;q=0.5` } });
      await axeInEveryPage(context);
      const page = await context.newPage();
      const blocked = recordCspViolations(page);
      await page.goto(`${t.url}/console/sign-in`);
      await checked(page, language);
      await page.locator('#email').fill(EMAIL);
      await page.locator('#password').fill('not the password');
      await page.locator('button[type="submit"]').tap();
      await page.locator('#sign-in-error').waitFor();
      await checked(page, language);
      await page.locator('#password').fill(PASSWORD);
      await Promise.all([page.waitForURL(`${t.url}/console`), page.locator('button[type="submit"]').tap()]);

      const paths = [
        '/console',
        '/console/keys',
        '/console/apps',
        '/console/calls',
        `/console/calls/${call.id}`,
        '/console/sessions',
        `/console/sessions/${session.id}`,
        '/console/events',
        '/console/events/history',
        '/console/events/history?from=soon',
        '/console/webhooks',
        '/console/phone-numbers',
        '/console/ledger',
        '/console/members',
        '/console/account',
      ];
      for (const path of paths) {
        await page.goto(`${t.url}${path}`);
        await checked(page, language);
      }
      // The script's own words: the copy button of a new key.
      await page.goto(`${t.url}/console/keys`);
      await Promise.all([page.waitForURL(`${t.url}/console/keys`), page.locator('form[action="/console/keys"] button[type="submit"]').tap()]);
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.locator('button[data-copy="new-key"]').tap();
      await expect.poll(() => page.locator('button[data-copy="new-key"]').textContent()).not.toBe('Copy');
      await checked(page, language);
      // An unknown item and a problem page.
      await page.goto(`${t.url}/console/calls/call_nothing`);
      await checked(page, language);
      expect(blocked).toEqual([]);
      await context.close();
    });
  }

  it('stays in English without Accept-Language, and takes the best-liked catalogue language', async () => {
    const plain = await fetch(`${t.url}/console/sign-in`, { headers: { 'Accept-Language': '' } });
    expect(await plain.text()).toContain('<html lang="en" dir="ltr">');
    const weighted = await fetch(`${t.url}/console/sign-in`, { headers: { 'Accept-Language': 'fi, de;q=0.4, fr-CA;q=0.8' } });
    const html = await weighted.text();
    expect(html).toContain('<html lang="fr" dir="ltr">');
    expect(html).toContain('Se connecter');
  });
});
