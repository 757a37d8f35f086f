// Checks a page in chromium as its reader meets it: no word of the page in English when it is shown in
// another language (the other person's own text aside), and no serious or critical axe-core violation.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BrowserContext, Page } from 'playwright-core';
import { WORD_KEYS, translator } from '../../src/web/i18n/catalogue.js';

const words = (text: string) => (text.match(/\p{L}{3,}/gu) ?? []).map((word) => word.toLowerCase());

/** Words of the English catalogue that `language`'s own words do not also use ("Chat", "Name"). */
function englishOnlyWords(language: string): Set<string> {
  const english = translator('en');
  const own = translator(language);
  const ownWords = new Set(WORD_KEYS.flatMap((key) => words(own.t(key))));
  return new Set(WORD_KEYS.flatMap((key) => words(english.t(key))).filter((word) => !ownWords.has(word)));
}

/**
 * The English words a reader of `page` (shown in `language`) meets: its visible text, the labels and
 * placeholders of its visible elements and its title, leaving out what `othersText` selects (the other
 * person's messages, name and company: their own words, in whatever language they wrote them).
 */
export async function englishWordsOn(page: Page, language: string, othersText: string[]): Promise<string[]> {
  const seen = await page.evaluate((excluded) => {
    const skip = (element: Element | null) => !element || excluded.some((selector) => element.closest(selector));
    const texts: string[] = [document.title];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || skip(parent) || !parent.checkVisibility() || parent.closest('script, style, noscript')) continue;
      texts.push(node.textContent ?? '');
    }
    for (const element of document.body.querySelectorAll('[aria-label], [title], [placeholder], [alt]')) {
      if (skip(element) || !element.checkVisibility()) continue;
      for (const name of ['aria-label', 'title', 'placeholder', 'alt']) texts.push(element.getAttribute(name) ?? '');
    }
    return texts.join('\n');
  }, othersText);
  const english = englishOnlyWords(language);
  return [...new Set(words(seen).filter((word) => english.has(word)))];
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core in every document `context` loads, for a test that checks (nearly) every page it opens: the context
 * gets its source once instead of each check sending it (half a megabyte over playwright's connection, parsed by
 * node, the browser and the page): about 0.07 s less per page state checked, as much more per page not checked.
 */
export async function axeInEveryPage(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: axeSource });
}

/**
 * axe-core's serious and critical violations on the page as it is now (WCAG 2.x A and AA, best
 * practices), one line each: `rule (impact): help at targets`, so a failing test reads what to fix.
 */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: any[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation) => ({
      id: violation.id as string,
      impact: violation.impact as string | null,
      help: violation.help as string,
      targets: violation.nodes.map((node: { target: string[] }) => node.target.join(' ')),
    }));
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.targets.join(', ')}`);
}

/**
 * seriousAxeViolations once per page state (as the test names it) and layout: colour scheme, text direction and
 * viewport. The same state in another language differs only in its words, which change neither the structure
 * axe-core checks nor the colours it measures, so a language after the first with the same layout is not checked
 * again; each language's words still are (englishWordsOn). axe-core is two thirds of what a page state costs
 * (about 0.2 of 0.3 s of CPU). One per test file: what it remembers is that file's.
 */
export function axeOncePerLayout(): (page: Page, state: string) => Promise<string[]> {
  const checked = new Set<string>();
  return async (page, state) => {
    const layout = await page.evaluate(() => [matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light', document.documentElement.dir, innerWidth, innerHeight]);
    const key = JSON.stringify([state, ...layout]);
    if (checked.has(key)) return [];
    checked.add(key);
    return seriousAxeViolations(page);
  };
}

/**
 * The stylesheets, scripts, images and fonts `page` asks for from now on that do not arrive (an answer of 400 or
 * more, or no answer), as `status url` lines: a page whose stylesheet is missing still passes axe-core and fits the
 * screen, unstyled.
 */
export function missingAssets(page: Page): string[] {
  const missing: string[] = [];
  const isAsset = (type: string) => ['stylesheet', 'script', 'image', 'font'].includes(type);
  page.on('response', (response) => {
    if (isAsset(response.request().resourceType()) && response.status() >= 400) missing.push(`${response.status()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => {
    if (isAsset(request.resourceType())) missing.push(`failed ${request.url()}`);
  });
  return missing;
}
