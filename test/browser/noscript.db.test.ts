// The call and chat pages as a browser without JavaScript meets them: the words that say so, the title and
// the document's language and direction come in the visitor's language (Accept-Language, as the pages'
// scripts start from navigator.language), from the page catalogue; each language's page is cached apart.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { translator } from '../../src/web/i18n/catalogue.js';
import { launchChromium } from '../support/browser.js';
import { englishWordsOn } from '../support/pageChecks.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('the call and chat pages without JavaScript, in chromium', () => {
  let t: TestServer;
  let browser: Browser;
  let links: { call: string; chat: string };
  beforeAll(async () => {
    t = await startTestServer();
    browser = await launchChromium();
    const orgId = await t.createOrg();
    const { key } = await t.createKey(orgId, 'test');
    const { data: session } = await t.client(key).POST('/v1/sessions', { body: { agent_language: 'en' } });
    const { data: call } = await t.client(key).POST('/v1/calls', { body: { agent_language: 'en' } });
    const pathOf = (url: string) => `${t.url}${new URL(url).pathname}${new URL(url).hash}`;
    links = { chat: pathOf(session!.customer_url!), call: pathOf(call!.customer_url) };
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  for (const [locale, lang, dir] of [
    ['es-ES', 'es', 'ltr'],
    ['ar', 'ar', 'rtl'],
    ['de-DE', 'de', 'ltr'],
  ] as const) {
    it(`says in ${lang} that the pages need JavaScript, with lang="${lang}" dir="${dir}"`, async () => {
      const context = await browser.newContext({ javaScriptEnabled: false, locale, viewport: { width: 390, height: 800 } });
      try {
        for (const kind of ['call', 'chat'] as const) {
          const page = await context.newPage();
          await page.goto(links[kind]);
          expect(await page.getAttribute('html', 'lang')).toBe(lang);
          expect(await page.getAttribute('html', 'dir')).toBe(dir);
          const notice = page.locator('noscript p');
          await notice.waitFor({ state: 'visible' });
          expect(await notice.textContent()).toBe(translator(lang).t(`${kind}.noscript`));
          expect(await page.title()).toBe(translator(lang).t(`${kind}.loading`));
          // What a reader without JavaScript sees is all in their language (axe-core needs scripts: the pages with
          // them are checked in callPage and chatPage).
          const seen = await page.evaluate(() => document.body.innerText);
          expect(seen).toContain(translator(lang).t(`${kind}.noscript`));
          expect(await englishWordsOn(page, lang, [])).toEqual([]);
          await page.close();
        }
      } finally {
        await context.close();
      }
    });
  }

  it('answers English without a catalogue language, and keeps one cached copy per language', async () => {
    const chatPath = new URL(links.chat).pathname;
    const get = (acceptLanguage: string, headers: Record<string, string> = {}) =>
      fetch(`${t.url}${chatPath}`, { headers: { 'Accept-Language': acceptLanguage, ...headers } });
    const finnish = await get('fi, sv;q=0.5');
    expect(finnish.status).toBe(200);
    expect(finnish.headers.get('content-language')).toBe('en');
    const html = await finnish.text();
    expect(html).toContain('<html lang="en" dir="ltr">');
    expect(html).toContain(translator('en').t('chat.noscript'));

    const spanish = await get('es-MX,es;q=0.9,en;q=0.8');
    expect(spanish.headers.get('vary')).toMatch(/Accept-Language/i);
    expect(spanish.headers.get('content-language')).toBe('es');
    const etag = spanish.headers.get('etag')!;
    expect(etag).toBeTruthy();
    expect(etag).not.toBe(finnish.headers.get('etag'));
    // The browser's copy is still good: 304, no body (fetch would send no-cache with a conditional request).
    const again = await get('es', { 'If-None-Match': etag, 'Cache-Control': 'max-age=0' });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });
});
