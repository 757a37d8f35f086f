// Seeing the business in chromium on a 390 px phone: from the lists to a call's page (the place of its
// transcript) and a session's messages in both languages, the events history filtered by type and
// object, and the ledger exported as CSV. Every page fits the screen and passes axe-core.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { launchChromium, phonePageProblems, recordCspViolations } from '../support/browser.js';
import { addMember, PASSWORD } from '../support/consoleVisitor.js';
import { startLibreTranslateStandIn } from '../support/standins/libreTranslateStandIn.js';
import type { StandInServer } from '../support/standins/standInServer.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

describe(`console records in chromium (${backendName})`, () => {
  let t: TestServer;
  let translator: StandInServer & { url: string };
  let browser: Browser;
  let key: string;
  beforeAll(async () => {
    translator = await startLibreTranslateStandIn({ apiKey: 'lt-records' });
    t = await startTestServer({ LIBRETRANSLATE_URL: translator.url, LIBRETRANSLATE_API_KEY: 'lt-records' });
    const orgId = await t.createOrg({ name: 'Records Org', balance: 10, currency: 'EUR', text_rate_per_million_characters: 1_000 });
    await addMember(t, orgId, 'ops@records.example');
    ({ key } = await t.createKey(orgId, 'live'));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await translator?.close();
  });

  const api = async (path: string, body: unknown) =>
    (await fetch(`${t.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();
  const wellFormed = async (page: Page) => expect(await phonePageProblems(page, PHONE.viewport.width), page.url()).toEqual([]);
  const open = async (page: Page, link: ReturnType<Page['getByRole']>, path: string) => {
    await Promise.all([page.waitForURL(`${t.url}${path}`), link.tap()]);
    await wellFormed(page);
  };

  it("opens a call's page and a session's messages from the lists, filters the events history and exports the ledger", async () => {
    const session = await api('/v1/sessions', { agent_language: 'en', customer_language: 'de', agent_name: 'Alice', customer_name: 'Matti' });
    const message = await api(`/v1/sessions/${session.id}/messages`, { sender: 'agent', text: 'Your order ships today.' });
    const call = await api('/v1/calls', { agent_language: 'en', customer_language: 'fi', agent_name: 'Alice', customer_name: 'Matti' });

    const context = await browser.newContext({ ...PHONE, acceptDownloads: true });
    const page = await context.newPage();
    const blocked = recordCspViolations(page);
    await page.goto(`${t.url}/console/sessions`);
    await page.getByLabel('Email').fill('ops@records.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForURL(`${t.url}/console/sessions`), page.getByRole('button', { name: 'Sign in' }).tap()]);

    await open(page, page.getByRole('link', { name: session.id }), `/console/sessions/${session.id}`);
    const row = page.locator('tr', { hasText: 'Your order ships today.' });
    expect(await row.locator('span[lang="de"]').textContent()).toBe(message.customer_text);

    await Promise.all([page.waitForURL(`${t.url}/console/calls`), page.getByRole('link', { name: 'Calls', exact: true }).tap()]);
    await open(page, page.getByRole('link', { name: call.id }), `/console/calls/${call.id}`);
    expect(await page.getByRole('heading', { name: 'Transcript' }).isVisible()).toBe(true);

    await page.goto(`${t.url}/console/events`);
    await open(page, page.getByRole('link', { name: 'Events history' }), '/console/events/history');
    await page.getByLabel('Type').selectOption('message.created');
    await Promise.all([page.waitForURL(/type=message\.created/), page.getByRole('button', { name: 'Filter' }).tap()]);
    expect(await page.locator('.event-type').allTextContents()).toEqual(['message.created']);
    await wellFormed(page);
    await page.getByLabel('Type').selectOption('');
    await page.getByLabel('Call or session id').fill(call.id);
    await Promise.all([page.waitForURL(/object=call_/), page.getByRole('button', { name: 'Filter' }).press('Enter')]);
    expect(await page.locator('.event-type').allTextContents()).toEqual(['call.created']);

    await page.getByRole('link', { name: 'Ledger' }).tap();
    await page.waitForURL(`${t.url}/console/ledger`);
    await wellFormed(page);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).tap()]);
    expect(download.suggestedFilename()).toBe('ledger-live.csv');
    const csv = await (await download.createReadStream()).toArray();
    const text = Buffer.concat(csv).toString('utf8');
    expect(text.split('\r\n')[0]).toBe('id,created_at,mode,kind,quantity,amount,reference,app_id');
    expect(text).toContain(`,live,text,`);
    expect(text).toContain(`message ${message.id}`);
    expect(blocked).toEqual([]);
    await context.close();
  });
});
