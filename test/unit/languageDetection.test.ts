// Language detection (src/translation/language.ts) on the labelled short texts of bench/fixtures. A reliable
// wrong answer is the costly error (a text taken for the target language stays untranslated), so the
// project must be right at least as often as, and wrong no more often than, the detector of issue 13's time.
import { describe, expect, it } from 'vitest';
import { loadLabelledTexts, measureDetection, referenceDetector } from '../../bench/support/detection.js';
import { detectLanguage } from '../../src/translation/language.js';

describe('language detection on labelled short texts', () => {
  it('is right at least as often as the reference detector, and wrong no more often', async () => {
    const texts = await loadLabelledTexts();
    const project = await measureDetection(detectLanguage, texts);
    const baseline = await measureDetection(referenceDetector, texts);
    expect(project.correct).toBeGreaterThanOrEqual(baseline.correct);
    expect(project.wrong.length, JSON.stringify(project.wrong)).toBeLessThanOrEqual(baseline.wrong.length);
  });

  it('does not take "Hello world" for Norwegian: a near tie is left undecided unless a second detector confirms it', async () => {
    expect(await detectLanguage('Hello world')).toBeNull();
    // A near tie the second detector confirms keeps its answer (ELD scores Norwegian and Swedish alike).
    expect(await detectLanguage('Tusen takk')).toBe('no');
    // Not a near tie: the second detector is not asked.
    expect(await detectLanguage('Where is my order?')).toBe('en');
  });

  it('answers null for empty text rather than guessing', async () => {
    expect(await detectLanguage('')).toBeNull();
    expect(await detectLanguage('   ')).toBeNull();
  });
});
