// Debian's chromium driven by playwright-core (no browser download); flags from ../shared/STACK.md.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * How long a test waits for the page to show something: only how long a stuck page is waited for, never a
 * measure of speed (chromium on a loaded 2-core machine takes seconds where it takes milliseconds alone).
 */
export const PAGE_WAIT_MS = 60_000;

export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
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
}

/** Adds to `into` whatever the page's Content-Security-Policy blocks (Chromium reports each refusal on the console). */
export function recordCspViolations(page: Page, into: string[] = []): string[] {
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) into.push(message.text());
  });
  return into;
}

const AXE_SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/axe-core/axe.min.js');

/** axe-core's serious and critical violations on the page as it is now ("id: targets"); [] when clean. */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern (a script tag it would).
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(await readFile(AXE_SOURCE, 'utf8'));
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.targets.join(', ')}`);
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
