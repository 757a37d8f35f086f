import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, PAGE_WAIT_MS, recordCspViolations } from '../support/browser.js';
import { seriousAxeViolations } from '../support/pageChecks.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const WAIT = { timeout: PAGE_WAIT_MS };

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

  /**
   * /docs as it first renders, at 1280x900, with what it requested outside this origin and what its policy
   * blocked: loaded once for the three tests below, one after the other: the first only reads it, the axe test
   * starts from it, and Try it out goes on from where the axe test leaves it (Swagger UI rendering the whole
   * contract is the costliest page load of the suite, about 3.5 s of CPU, and each of its changes about 0.5 s).
   */
  let firstLoad: Promise<{ page: Page; answer: Response | null; foreign: string[]; blocked: string[] }> | undefined;
  const loadedDocs = () =>
    (firstLoad ??= (async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const foreign: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(t.url)) foreign.push(request.url());
      });
      const blocked = recordCspViolations(page);
      const answer = await page.goto(`${t.url}/docs`);
      await page.waitForSelector('.opblock', WAIT);
      return { page, answer, foreign, blocked };
    })());

  it('renders every operation of the contract from local assets only', async () => {
    const { page, answer, foreign, blocked } = await loadedDocs();
    // Only this origin may frame the reference; it renders under its own policy with nothing blocked.
    expect(answer!.headers()['content-security-policy']).toMatch(/default-src 'self'.*script-src 'self'.*frame-ancestors 'self'/);
    expect(answer!.headers()['x-content-type-options']).toBe('nosniff');
    const contract = await (await fetch(`${t.url}/openapi.json`)).json();
    const operations = Object.values(contract.paths).flatMap((item) => Object.keys(item as object)).length;
    expect(await page.locator('.opblock').count()).toBe(operations);
    expect(await page.locator('.title').first().textContent()).toContain('Live-Interpretation and Support-Chat API');
    expect(foreign.filter((url) => !url.startsWith('data:'))).toEqual([]);
    expect(blocked).toEqual([]);
  });

  it('/docs: no serious axe violation, operations closed, one opened to try out, and the authorization dialog', async () => {
    const { page } = await loadedDocs();
    expect(await page.locator('.opblock.is-open').count()).toBe(0);
    expect(await seriousAxeViolations(page)).toEqual([]);

    const operation = page.locator('#operations-sessions-createSession');
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('button.try-out__btn').click();
    await operation.locator('button.execute').waitFor(WAIT);
    expect(await seriousAxeViolations(page)).toEqual([]);

    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux').waitFor(WAIT);
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('Try it out: two different POSTs in a row work (no fixed Idempotency-Key), the authorization outlives a reload, a filter, streams say curl -N', async () => {
    const orgId = await t.createOrg();
    const { key } = await t.createKey(orgId, 'test');
    const { page } = await loadedDocs();
    expect(await page.locator('meta[name="viewport"]').getAttribute('content')).toContain('width=device-width');

    // The authorization dialog: the axe test leaves it open.
    if (!(await page.locator('.modal-ux').isVisible())) await page.locator('button.authorize').first().click();
    const bearer = page.locator('.auth-container').filter({ hasText: 'BearerAuth' });
    await bearer.locator('input').fill(key);
    await bearer.locator('button.authorize').click();
    await page.locator('.modal-ux button.btn-done').first().click();

    /** Opens an operation, tries it out with its example, and answers the status it got. */
    const tryOut = async (id: string) => {
      const operation = page.locator(`#${id}`);
      if (!(await operation.locator('.opblock-body').isVisible())) await operation.locator('.opblock-summary').first().click();
      const tryButton = operation.locator('button.try-out__btn');
      if ((await tryButton.textContent())?.includes('Try it out')) await tryButton.click();
      const idempotencyKey = operation.locator('tr[data-param-name="Idempotency-Key"] input');
      if (await idempotencyKey.count()) expect(await idempotencyKey.inputValue()).toBe('');
      // The answer of an earlier try goes first, so the one read is this try's.
      const clear = operation.locator('button.btn-clear');
      if (await clear.isVisible()) await clear.click();
      await operation.locator('button.execute').click();
      const status = operation.locator('.live-responses-table tbody .response-col_status').first();
      await status.waitFor(WAIT);
      return (await status.textContent())!.trim();
    };
    expect(await tryOut('operations-sessions-createSession')).toBe('201');
    expect(await tryOut('operations-translation-translate')).toBe('200');
    expect(await tryOut('operations-sessions-createSession')).toBe('201');
    const { data } = await t.client(key).GET('/v1/sessions', {});
    expect(data!).toHaveLength(2); // the same POST twice made two sessions, not a replay

    // After a reload the authorization is still there.
    await page.reload();
    await page.waitForSelector('.opblock', WAIT);
    expect(await tryOut('operations-account-getAccount')).toBe('200');

    // The filter narrows the operations to a tag.
    await page.locator('.operation-filter-input').fill('translation');
    await expect.poll(() => page.locator('.opblock-tag-section').count(), WAIT).toBe(1);
    await page.locator('.operation-filter-input').fill('');

    // An event stream says it is one, and how to read it.
    const stream = page.locator('#operations-events-streamEvents');
    await stream.locator('.opblock-summary').first().click();
    expect(await stream.locator('.opblock-description-wrapper').textContent()).toContain(`curl -N -H 'Authorization: Bearer $API_KEY' '${t.url}/v1/events'`);
    await page.close();
  });

  it('/docs/asyncapi: Markdown rendered, a table of contents that leads to every channel, nothing wider than a 390 px phone, no serious axe violation', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const blocked = recordCspViolations(page);
    await page.goto(`${t.url}/docs/asyncapi`);
    const document = await (await fetch(`${t.url}/asyncapi.json`)).json();

    // Every channel is listed in the contents, and each entry leads to its section.
    const links = await page.locator('nav.toc a').evaluateAll((anchors) => anchors.map((a) => a.getAttribute('href')!));
    expect(links.length).toBe(Object.keys(document.channels).length + 3);
    for (const href of links) expect(await page.locator(href).count(), href).toBe(1);

    // Markdown became markup: no asterisks, backticks or fences left in the text.
    const text = await page.locator('main').innerText();
    expect(text).not.toMatch(/\*\*|```/);
    expect(text.match(/`/g) ?? []).toEqual([]);
    expect(await page.locator('#overview strong, #overview code').count()).toBeGreaterThan(0);
    expect(await page.locator('section[id^="channel-"] p code').count()).toBeGreaterThan(0);

    // Nothing wider than the phone: the page does not scroll sideways (long JSON scrolls inside its box).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await seriousAxeViolations(page)).toEqual([]);
    expect(blocked).toEqual([]);
    await page.close();
  });
});
