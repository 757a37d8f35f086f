// Which target languages the dedicated realtime translation model can speak, and language-tag helpers
// for choosing between it and the general realtime model.
//
// Source: OpenAI's cookbook guide "Build Live Translation Apps with gpt-realtime-translate"
// (openai-cookbook, examples/voice_solutions/realtime_translation_guide.mdx, section "Supported
// languages"): 13 target output languages — Spanish, Portuguese, French, Japanese, Russian, Chinese,
// German, Korean, Hindi, Indonesian, Vietnamese, Italian and English (over 70 input languages, detected
// automatically). The list can change upstream, so the factory takes an override.

export const TRANSLATION_OUTPUT_LANGUAGES: readonly string[] = [
  'en',
  'es',
  'pt',
  'fr',
  'ja',
  'ru',
  'zh',
  'de',
  'ko',
  'hi',
  'id',
  'vi',
  'it',
];

/** The primary language subtag, lower case: `pt-BR` -> `pt`, `zh_Hant` -> `zh`, ` EN ` -> `en`. */
export function baseLanguage(tag: string): string {
  return (tag ?? '').trim().split(/[-_]/)[0]!.toLowerCase();
}

/** True when the translation model can speak `targetLanguage` (compared by primary subtag). */
export function translationModelSpeaks(targetLanguage: string, languages: readonly string[] = TRANSLATION_OUTPUT_LANGUAGES): boolean {
  const base = baseLanguage(targetLanguage);
  return base !== '' && languages.some((language) => baseLanguage(language) === base);
}

let displayNames: Intl.DisplayNames | null | undefined;

/** An English name for a language tag ("Swahili"), or the tag itself when none is known. */
export function languageName(tag: string): string {
  if (displayNames === undefined) {
    try {
      displayNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
    } catch {
      displayNames = null;
    }
  }
  try {
    const name = displayNames?.of(tag.trim());
    if (name && name.toLowerCase() !== tag.trim().toLowerCase()) return name;
  } catch {
    // An invalid tag: fall through to the tag itself.
  }
  return tag.trim();
}
