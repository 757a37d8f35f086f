// Chooses the live transcription engine from configuration (DESIGN §7).
import type { Config } from '../config.js';
import type { Configured } from '../configuredEngine.js';
import type { TranscriptionEngine } from './engine.js';
import { createOpenAiTranscriptionEngine } from './openai.js';

/** The live engine, or the setting a live voice message is told to add (502 detail). */
export type ConfiguredTranscription = Configured<TranscriptionEngine>;

export function createTranscriptionEngine(config: Config['engines']): ConfiguredTranscription {
  if (!config.openai.apiKey) return { missingSetting: 'OPENAI_API_KEY' };
  return createOpenAiTranscriptionEngine({
    apiKey: config.openai.apiKey,
    baseUrl: config.openai.baseUrl,
    model: config.openai.transcriptionModel,
  });
}
