// npm run bench:detect: the project's language detection (src/translation/language.ts) on the labelled
// short texts of bench/fixtures/short-texts.json, beside the reference detector (what the project used
// when issue 13 was filed: ELD's medium dictionaries, answers ELD itself calls reliable), with the goals.
// bench:start prints the same through detectionReport().
import { detectLanguage } from '../src/translation/language.js';
import {
  detectionGoals,
  detectionTime,
  formatDetection,
  loadLabelledTexts,
  measureDetection,
  referenceDetector as reference,
} from './support/detection.js';
import { num } from './support/format.js';
import { formatGoals, type Goal } from './support/goals.js';

export async function detectionReport(): Promise<{ text: string; goals: Goal[] }> {
  const texts = await loadLabelledTexts();
  const project = await measureDetection(detectLanguage, texts);
  const baseline = await measureDetection(reference, texts);
  const projectUs = await detectionTime(detectLanguage, texts);
  const referenceUs = await detectionTime(reference, texts);
  const text = [
    `Language detection on ${texts.length} labelled short texts in ${Object.keys(project.perLanguage).length} languages (bench/fixtures/short-texts.json):`,
    formatDetection(`project (src/translation/language.ts), ${num(projectUs, 0)} us per text`, project),
    formatDetection(`reference (eld/medium, reliable answers only), ${num(referenceUs, 0)} us per text`, baseline),
  ].join('\n\n');
  return { text, goals: detectionGoals(project, baseline, texts) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { text, goals } = await detectionReport();
  console.log(text);
  console.log('\nGoals (issue 13):');
  console.log(formatGoals(goals));
}
