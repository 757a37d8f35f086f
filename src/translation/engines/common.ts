// Small helpers shared by the text translation engines.

import type { EngineTranslation } from '../engine.js';

export { baseLanguage } from '../language.js';

/** The region or script part of a code in upper case (`pt-br` -> `BR`, `zh-Hant` -> `HANT`), or ''. */
export function languageRegion(code: string): string {
  const parts = code.trim().split(/[-_]/);
  return parts.length > 1 ? parts[1]!.toUpperCase() : '';
}

/** English name of a language code for prompts (`pt-BR` -> `Brazilian Portuguese`), or the code itself. */
export function languageName(code: string): string {
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(code.replace(/_/g, '-'));
    return name && name !== code ? name : code;
  } catch {
    return code;
  }
}

/**
 * Translates only the texts that have something to translate: blank texts (empty or whitespace) are
 * returned as they are, with no detected language. Upstreams differ on blank input (DeepL refuses an
 * empty text, LLMs may "translate" it), and sending them would cost money for nothing.
 */
export async function translateNonBlank(
  texts: string[],
  translate: (texts: string[]) => Promise<EngineTranslation[]>,
): Promise<EngineTranslation[]> {
  const indexes: number[] = [];
  texts.forEach((text, index) => {
    if (text.trim() !== '') indexes.push(index);
  });
  const results: EngineTranslation[] = texts.map((text) => ({ text, detectedSourceLanguage: null }));
  if (indexes.length === 0) return results;
  const translated = await translate(indexes.map((index) => texts[index]!));
  indexes.forEach((index, position) => {
    results[index] = translated[position]!;
  });
  return results;
}
