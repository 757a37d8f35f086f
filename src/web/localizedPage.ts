// The call and chat pages' HTML in the visitor's language before any script runs: the document's `lang`
// and `dir`, and the text of each `data-i18n` element (the `<noscript>` words, the title, "Opening…"),
// from the page catalogue. The language is the first the browser asks for (Accept-Language) that the
// catalogue has, as the pages' scripts start with (navigator.language); each language's page is made
// once and kept, so a visit costs no more than the file it replaces.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';
import { pageLanguage } from './pageLanguage.js';
import { translator } from './i18n/catalogue.js';
import { escapeHtml } from './html.js';

/** An element whose whole content is one catalogue string. */
const TEXT = /(<(\w+)\b[^>]*?\sdata-i18n="([\w.]+)"[^>]*>)[^<]*(<\/\2>)/g;
/** An element whose attribute named by `data-i18n-attr` is one catalogue string (an aria-label). */
const ATTRIBUTE = /<\w+\b[^>]*?\sdata-i18n="([\w.]+)"[^>]*?\sdata-i18n-attr="([\w-]+)"[^>]*>/g;

/** `html` (a page written in English with `<html lang="en">`) in `language`, as the pages' translateDocument leaves it. */
export function localizeHtml(html: string, language: string): string {
  const words = translator(language);
  return html
    .replace('<html lang="en">', `<html lang="${words.lang}" dir="${words.dir}">`)
    .replace(ATTRIBUTE, (tag: string, key: string, attribute: string) =>
      tag.replace(new RegExp(`(\\s${attribute}=")[^"]*(")`), (_whole, start: string, end: string) => `${start}${escapeHtml(words.t(key))}${end}`),
    )
    .replace(TEXT, (whole: string, open: string, _tag: string, key: string, close: string) =>
      open.includes(' data-i18n-attr=') ? whole : `${open}${escapeHtml(words.t(key))}${close}`,
    );
}

/** Answers the page at `file` in the visitor's language. */
export function localizedPage(file: string): RequestHandler {
  const html = readFileSync(file, 'utf8');
  const byLanguage = new Map<string, { html: string; etag: string }>();
  return (req, res) => {
    const language = pageLanguage(req.get('accept-language'));
    let page = byLanguage.get(language);
    if (!page) {
      const localized = localizeHtml(html, language);
      byLanguage.set(language, (page = { html: localized, etag: `"${createHash('sha256').update(localized).digest('base64url').slice(0, 27)}"` }));
    }
    // Caches keep one copy per language; as the file it replaces, the page is checked again on each visit.
    res.set({ Vary: 'Accept-Language', 'Cache-Control': 'public, max-age=0', 'Content-Language': language, ETag: page.etag });
    if (req.fresh) res.status(304).end();
    else res.type('html').send(page.html);
  };
}
