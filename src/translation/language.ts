// Language codes and detection. Detection uses ELD (an n-gram detector, no network, no model download)
// and is trusted only when ELD itself calls the result reliable: a wrong guess would make a text
// "already in the target language" and leave it untranslated.
// The medium dictionary, loaded on the first detection rather than at start: only some requests detect,
// and it costs about 190 MiB and half a second. On the labelled short texts of bench/fixtures the smaller
// dictionaries lose answers (small one, extra-small five) and no stricter reliability rule keeps recall
// (`npm run bench:detect`), so the medium one stays and is simply not paid for by a server that never detects.
type Eld = (typeof import('eld/medium'))['eld'];
let detector: Promise<Eld> | undefined;
const loadDetector = () => (detector ??= import('eld/medium').then((module) => module.eld));

/**
 * The lower-case base language of a code (`pt-BR` -> `pt`, `EN` -> `en`, `zh_Hant` -> `zh`), or null
 * when the value is missing or does not look like a language code (`und`, `unknown`, `English`).
 */
export function baseLanguage(code: string | null | undefined): string | null {
  if (typeof code !== 'string') return null;
  const base = code.trim().split(/[-_]/, 1)[0]!.toLowerCase();
  if (!/^[a-z]{2,3}$/.test(base) || base === 'und') return null;
  return base;
}

export async function detectLanguage(text: string): Promise<string | null> {
  if (!text.trim()) return null;
  const result = (await loadDetector()).detect(text);
  return result.language && result.isReliable() ? result.language : null;
}

/** Unicode code points: what "characters" means for limits and billing. */
export const characterCount = (text: string) => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};
