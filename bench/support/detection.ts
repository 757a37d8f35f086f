// Language detection quality on a labelled set of short texts (bench/fixtures/short-texts.json): what
// share a detector gets right, what it leaves undecided (null: the text is translated anyway) and what
// it gets wrong (the dangerous case: a text taken for the target language is left untranslated).
// Importable: bench:detect and bench:start print it; a faster or smaller detector can be judged with it.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { num, table } from './format.js';
import { goal, type Goal } from './goals.js';

export interface LabelledText {
  lang: string;
  text: string;
}

export type Detector = (text: string) => string | null | Promise<string | null>;

/**
 * Deliberately frozen: what the project used when issue 13 was filed (ELD's medium dictionaries,
 * answers ELD itself calls reliable), the yardstick a detector is measured against.
 */
export const referenceDetector: Detector = async (text) => {
  const { eld } = await import('eld/medium');
  const result = eld.detect(text);
  return result.language && result.isReliable() ? result.language : null;
};

export interface DetectionQuality {
  total: number;
  correct: number;
  /** No answer (null). */
  undetected: number;
  wrong: Array<{ text: string; expected: string; got: string }>;
  perLanguage: Record<string, { total: number; correct: number }>;
  /** What each text came out as, in the set's order. */
  answers: Array<string | null>;
}

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'short-texts.json');

export async function loadLabelledTexts(file = FIXTURE): Promise<LabelledText[]> {
  return (JSON.parse(await readFile(file, 'utf8')) as { texts: LabelledText[] }).texts;
}

export async function measureDetection(detect: Detector, texts: readonly LabelledText[]): Promise<DetectionQuality> {
  const quality: DetectionQuality = { total: texts.length, correct: 0, undetected: 0, wrong: [], perLanguage: {}, answers: [] };
  for (const { lang, text } of texts) {
    const got = await detect(text);
    quality.answers.push(got);
    const language = (quality.perLanguage[lang] ??= { total: 0, correct: 0 });
    language.total++;
    if (got === lang) {
      quality.correct++;
      language.correct++;
    } else if (got === null) quality.undetected++;
    else quality.wrong.push({ text, expected: lang, got });
  }
  return quality;
}

/** Microseconds per text, over `rounds` passes through the set after one pass of warm-up. */
export async function detectionTime(detect: Detector, texts: readonly LabelledText[], rounds = 20): Promise<number> {
  for (const { text } of texts) await detect(text);
  const started = performance.now();
  for (let round = 0; round < rounds; round++) for (const { text } of texts) await detect(text);
  return ((performance.now() - started) * 1000) / (rounds * texts.length);
}

const percent = (part: number, whole: number) => `${num((part / whole) * 100, 1)} %`;

export function formatDetection(name: string, quality: DetectionQuality): string {
  const { total, correct, undetected, wrong } = quality;
  const languages = Object.entries(quality.perLanguage)
    .map(([lang, { total: n, correct: c }]) => `${lang} ${c}/${n}`)
    .join('  ');
  const lines = [
    `${name}: ${correct} of ${total} right (${percent(correct, total)}), ${undetected} undecided (${percent(undetected, total)}), ${wrong.length} wrong (${percent(wrong.length, total)})`,
    `  right per language: ${languages}`,
  ];
  if (wrong.length) {
    lines.push(
      table([['  wrong answers', 'expected', 'got'], ...wrong.map((w) => [`  ${JSON.stringify(w.text)}`, w.expected, w.got])])
        .split('\n')
        .map((line) => (line.startsWith('-') ? `  ${line.slice(2)}` : line))
        .join('\n'),
    );
  }
  return lines.join('\n');
}

/**
 * "No loss of detection quality" (issue 13): as many right and no more wrong than the reference (the
 * detector as it was when the issue was filed), and "Hello world" not taken for another language.
 */
export function detectionGoals(project: DetectionQuality, reference: DetectionQuality, texts: readonly LabelledText[]): Goal[] {
  const hello = texts.findIndex((t) => t.text === 'Hello world');
  const helloAnswer = hello >= 0 ? project.answers[hello] : undefined;
  return [
    goal(`detection: texts right >= reference (${reference.correct})`, project.correct, '>=', reference.correct, String),
    goal(`detection: texts wrong <= reference (${reference.wrong.length})`, project.wrong.length, '<=', reference.wrong.length, String),
    {
      name: 'detection: "Hello world" is English or undecided',
      value: helloAnswer === undefined ? 'not measured' : String(helloAnswer),
      met: helloAnswer === undefined ? null : helloAnswer === 'en' || helloAnswer === null,
    },
  ];
}
