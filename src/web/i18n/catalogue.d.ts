// Types of the browser module next to this file (served as plain JavaScript, imported by unit tests).
export interface PageWords {
  t(key: string, values?: Record<string, string | number>): string;
  lang: string;
  dir: 'ltr' | 'rtl';
}
export const PAGE_LANGUAGES: string[];
export const WORD_KEYS: string[];
export function baseLanguage(tag: string): string;
export function translator(language: string | null | undefined): PageWords;
export function translateDocument(root: Document, language: string | null | undefined): PageWords;
export function languageName(code: string, inLanguage: string): string;
