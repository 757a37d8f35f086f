// Language codes and detection. Detection uses ELD (an n-gram detector, no network, no model download)
// and is trusted only when ELD itself calls the result reliable: a wrong guess would make a text
// "already in the target language" and leave it untranslated.
// The medium dictionary, loaded on the first detection rather than at start: only some requests detect,
// and it costs about 190 MiB and half a second. On the labelled short texts of bench/fixtures the smaller
// dictionaries lose answers (small one, extra-small five) and no stricter reliability rule keeps recall
// (`npm run bench:detect`), so the medium one stays and is simply not paid for by a server that never detects.
//
// A near tie gets a second opinion. When ELD's runner-up scores within NEAR_TIE of its answer (two-word
// greetings: "Hello world" scores 0.7101 Norwegian, 0.7093 Tagalog), its answer stands only if tinyld,
// a detector built for short texts with different n-gram data, ranks it among its own first two (or has
// no opinion at all, as for a single Arabic word). Otherwise the text is undecided, which costs a
// translation at worst, where a wrong answer costs the translation itself. On bench/fixtures this keeps
// every right answer and leaves one wrong answer of four. tinyld (+50 MiB) loads only when a tie needs it.
import { onFirstUse } from '../lib/onFirstUse.js';

const loadDetector = onFirstUse(() => import('eld/medium').then((module) => module.eld));
const loadSecondOpinion = onFirstUse(() => import('tinyld').then((module) => module.detectAll));

/** How close (relative to the top score) a runner-up must come for ELD's answer to count as a tie. */
const NEAR_TIE = 0.05;
/** How far down tinyld's ranking ELD's answer may be and still be confirmed. */
const CONFIRMING_RANKS = 2;

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
  if (!result.language || !result.isReliable()) return null;
  const [top, runnerUp] = Object.values(result.getScores()).sort((a, b) => b - a);
  if (runnerUp === undefined || top - runnerUp >= NEAR_TIE * top) return result.language;
  const ranking = (await loadSecondOpinion())(text);
  const confirmed = !ranking.length || ranking.slice(0, CONFIRMING_RANKS).some((guess) => guess.lang === result.language);
  return confirmed ? result.language : null;
}

/** Unicode code points: what "characters" means for limits and billing. */
export const characterCount = (text: string) => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};
