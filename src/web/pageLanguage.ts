// The language of the server's pages (the console, and the call and chat pages before their scripts run):
// the request's Accept-Language matched to the page catalogue's languages; English when none matches.
import { baseLanguage, PAGE_LANGUAGES } from './i18n/catalogue.js';

/** The catalogue language the reader prefers most (highest q, then order), or English. */
export function pageLanguage(acceptLanguage: string | undefined): string {
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .slice(0, 50)
    .map((part, order) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { language: baseLanguage(tag), q: q === undefined ? 1 : Number(q), order };
    })
    .filter((entry) => entry.q > 0 && PAGE_LANGUAGES.includes(entry.language))
    .sort((a, b) => b.q - a.q || a.order - b.order);
  return ranked[0]?.language ?? 'en';
}
