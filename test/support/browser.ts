// Debian's chromium driven by playwright-core (no browser download); flags from ../shared/STACK.md.
import { chromium, type Browser, type Page } from 'playwright-core';
import { seriousAxeViolations } from './pageChecks.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * How long a test waits for the page to show something: only how long a stuck page is waited for, never a
 * measure of speed (chromium on a loaded 2-core machine takes seconds where it takes milliseconds alone).
 */
export const PAGE_WAIT_MS = 60_000;

/**
 * Chromium for a test file. Every context it opens (newContext, and so newPage's own) waits PAGE_WAIT_MS for an
 * action or a navigation instead of playwright's 30 s, for the reason PAGE_WAIT_MS gives.
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(PAGE_WAIT_MS);
    return context;
  };
  return browser;
}

/** Adds to `into` whatever the page's Content-Security-Policy blocks (Chromium reports each refusal on the console). */
export function recordCspViolations(page: Page, into: string[] = []): string[] {
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) into.push(message.text());
  });
  return into;
}

/**
 * What keeps the page from working on a phone `width` px wide for everyone: elements reaching past the
 * screen (a table's own scrolling region excepted), a page wider than the screen, and axe-core's serious
 * and critical violations. [] when there is nothing.
 */
export async function phonePageProblems(page: Page, width: number): Promise<string[]> {
  const wider = await page.evaluate(
    (screen) =>
      [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > screen && !e.closest('.table'))
        .map((e) => `wider than the screen: ${e.tagName.toLowerCase()}.${e.className}`),
    width,
  );
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  return [...wider, ...(scrollWidth > width ? [`page ${scrollWidth} px wide`] : []), ...(await seriousAxeViolations(page))];
}
