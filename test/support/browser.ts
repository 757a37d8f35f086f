// Debian's chromium driven by playwright-core (no browser download); flags from ../shared/STACK.md.
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { seriousAxeViolations } from './pageChecks.js';
import { childPids, closeCounted } from './processCpu.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * How long a test waits for the page to show something: only how long a stuck page is waited for, never a
 * measure of speed (chromium on a loaded 2-core machine takes seconds where it takes milliseconds alone).
 */
export const PAGE_WAIT_MS = 60_000;

/**
 * The omnibox popups (two WebUI pages, a renderer process each) that headless Chromium preloads in every window, so
 * in every browser context a test opens: nothing a test looks at, and half of the CPU time a new context costs
 * (1.1 -> 0.55 s for a context, a page and a navigation on a quiet 2-core machine).
 */
const UNUSED_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'];

/**
 * Chromium reads only the last --disable-features it is given, and playwright gives its own before the caller's
 * arguments: ours carries playwright's (as its launcher makes them, so they follow its upgrades) and UNUSED_FEATURES.
 */
function disableFeaturesSwitch(): string {
  const { server } = createRequire(import.meta.url)('playwright-core/lib/coreBundle') as {
    server: { createPlaywright(options: { sdkLanguage: string }): { chromium: { _innerDefaultArgs(options: object): string[] } } };
  };
  const prefix = '--disable-features=';
  const playwrights = server
    .createPlaywright({ sdkLanguage: 'javascript' })
    .chromium._innerDefaultArgs({ headless: true, args: [] })
    .filter((arg) => arg.startsWith(prefix))
    .flatMap((arg) => arg.slice(prefix.length).split(','));
  return prefix + [...playwrights, ...UNUSED_FEATURES].join(',');
}

/**
 * Chromium for a test file. Every context it opens (newContext, and so newPage's own) waits PAGE_WAIT_MS for an
 * action or a navigation instead of playwright's 30 s, for the reason PAGE_WAIT_MS gives.
 */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const childrenBefore = process.env.TEST_COST_FILE ? new Set(childPids()) : null;
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
      disableFeaturesSwitch(),
      ...extraArgs,
    ],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(PAGE_WAIT_MS);
    return context;
  };
  // What its processes cost, for test/support/costSetup.ts.
  const [root] = childrenBefore ? childPids().filter((pid) => !childrenBefore.has(pid)) : [];
  if (root !== undefined) {
    const close = browser.close.bind(browser);
    browser.close = (options) => closeCounted(root, () => close(options));
  }
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
