// Chromium for the browser tests. One Chromium serves every browser test file of a run (sharedChromium.ts
// starts it as the browser project's globalSetup; each file connects and opens its own contexts): a launch
// per file cost each file a second or two of CPU and a browser's start-up memory.
import { chromium, type Browser, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { seriousAxeViolations } from './pageChecks.js';

/**
 * How long a test waits for the page to show something: only how long a stuck page is waited for, never a
 * measure of speed (chromium on a loaded 2-core machine takes seconds where it takes milliseconds alone).
 */
export const PAGE_WAIT_MS = 60_000;

/** The run's Chromium (sharedChromium.ts); closing what this returns closes this file's contexts, not the browser. */
export function connectChromium(): Promise<Browser> {
  const endpoint = inject('chromiumEndpoint');
  if (!endpoint) throw new Error('no chromiumEndpoint: test/support/sharedChromium.ts starts Chromium as the browser project\'s globalSetup (vitest.config.ts)');
  return chromium.connect(endpoint);
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
