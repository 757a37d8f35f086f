// The transcription engine of test mode: no upstream, no cost, a fixed transcript.

import type { TranscriptionEngine } from './engine.js';
import { baseLanguageCode } from './languages.js';

export const PLACEHOLDER_TRANSCRIPT = '[voice message]';

export const testModeTranscription: TranscriptionEngine = {
  name: 'test',
  model: 'placeholder',
  async transcribe(_audio, options) {
    return { text: PLACEHOLDER_TRANSCRIPT, language: baseLanguageCode(options.language) };
  },
};
