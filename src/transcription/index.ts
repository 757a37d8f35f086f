// Chooses the live transcription engine from configuration (docs/translation-and-billing.md, "Engines").
import type { Config } from '../config.js';
import type { Configured } from '../upstream/configured.js';
import { openAiSetup } from '../openai/setup.js';
import type { TranscriptionEngine } from './engine.js';
import { createOpenAiTranscriptionEngine } from './openai.js';

/** The live engine, or the setting a live voice message is told to add (502 detail). */
export type ConfiguredTranscription = Configured<TranscriptionEngine>;

export function createTranscriptionEngine(config: Config['engines']): ConfiguredTranscription {
  const openai = openAiSetup(config.openai);
  if ('missingSetting' in openai) return openai;
  return createOpenAiTranscriptionEngine({
    apiKey: openai.apiKey,
    baseUrl: openai.baseUrl,
    model: openai.transcriptionModel,
    timeoutMs: openai.timeouts.transcriptionMs,
    maxRetries: openai.retries.rest,
  });
}
