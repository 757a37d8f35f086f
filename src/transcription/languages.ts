// Language names and codes as speech-to-text upstreams give them, normalised to lower-case base codes.
//
// whisper (OpenAI `whisper-1`, `verbose_json`) names the detected language in English and lower case
// (`finnish`), not by code; other engines give codes (`fi`, `fi-FI`).

import { baseLanguage } from '../translation/language.js';

/** whisper's language names (its tokenizer's table) and common alternative names, to ISO 639-1 (or 639-2/3). */
const NAME_TO_CODE: Readonly<Record<string, string>> = {
  afrikaans: 'af',
  albanian: 'sq',
  amharic: 'am',
  arabic: 'ar',
  armenian: 'hy',
  assamese: 'as',
  azerbaijani: 'az',
  bashkir: 'ba',
  basque: 'eu',
  belarusian: 'be',
  bengali: 'bn',
  bosnian: 'bs',
  breton: 'br',
  bulgarian: 'bg',
  burmese: 'my',
  cantonese: 'yue',
  castilian: 'es',
  catalan: 'ca',
  chinese: 'zh',
  croatian: 'hr',
  czech: 'cs',
  danish: 'da',
  dutch: 'nl',
  english: 'en',
  estonian: 'et',
  faroese: 'fo',
  finnish: 'fi',
  flemish: 'nl',
  french: 'fr',
  galician: 'gl',
  georgian: 'ka',
  german: 'de',
  greek: 'el',
  gujarati: 'gu',
  haitian: 'ht',
  'haitian creole': 'ht',
  hausa: 'ha',
  hawaiian: 'haw',
  hebrew: 'he',
  hindi: 'hi',
  hungarian: 'hu',
  icelandic: 'is',
  indonesian: 'id',
  italian: 'it',
  japanese: 'ja',
  javanese: 'jv',
  kannada: 'kn',
  kazakh: 'kk',
  khmer: 'km',
  korean: 'ko',
  lao: 'lo',
  latin: 'la',
  latvian: 'lv',
  letzeburgesch: 'lb',
  lingala: 'ln',
  lithuanian: 'lt',
  luxembourgish: 'lb',
  macedonian: 'mk',
  malagasy: 'mg',
  malay: 'ms',
  malayalam: 'ml',
  maltese: 'mt',
  mandarin: 'zh',
  maori: 'mi',
  marathi: 'mr',
  moldavian: 'ro',
  moldovan: 'ro',
  mongolian: 'mn',
  myanmar: 'my',
  nepali: 'ne',
  norwegian: 'no',
  nynorsk: 'nn',
  occitan: 'oc',
  panjabi: 'pa',
  pashto: 'ps',
  persian: 'fa',
  polish: 'pl',
  portuguese: 'pt',
  punjabi: 'pa',
  pushto: 'ps',
  romanian: 'ro',
  russian: 'ru',
  sanskrit: 'sa',
  serbian: 'sr',
  shona: 'sn',
  sindhi: 'sd',
  sinhala: 'si',
  sinhalese: 'si',
  slovak: 'sk',
  slovenian: 'sl',
  somali: 'so',
  spanish: 'es',
  sundanese: 'su',
  swahili: 'sw',
  swedish: 'sv',
  tagalog: 'tl',
  tajik: 'tg',
  tamil: 'ta',
  tatar: 'tt',
  telugu: 'te',
  thai: 'th',
  tibetan: 'bo',
  turkish: 'tr',
  turkmen: 'tk',
  ukrainian: 'uk',
  urdu: 'ur',
  uzbek: 'uz',
  valencian: 'ca',
  vietnamese: 'vi',
  welsh: 'cy',
  yiddish: 'yi',
  yoruba: 'yo',
};

/** whisper's own, non-standard codes. */
const CODE_ALIASES: Readonly<Record<string, string>> = { jw: 'jv', iw: 'he', in: 'id', ji: 'yi' };

/** The base code (see baseLanguage) with whisper's own, non-standard codes mapped to the usual ones. */
export function baseLanguageCode(code: string | null | undefined): string | null {
  const base = baseLanguage(code);
  return base === null ? null : (CODE_ALIASES[base] ?? base);
}

/**
 * What an upstream said the language is, as a lower-case base code: a whisper-style English name
 * (`finnish`, `Haitian Creole`) or a code (`fi`, `fi-FI`). Null when empty or not recognised.
 */
export function languageCodeFrom(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const name = value.trim().toLowerCase().replace(/\s+/g, ' ');
  if (!name) return null;
  const named = NAME_TO_CODE[name];
  if (named) return named;
  return baseLanguageCode(name);
}
