// One OpenAI setup: the key, addresses, models, timeouts and retries that every OpenAI engine (text
// translation, transcription, live interpretation) reads, taken from the configuration in one place.

import type { Config } from '../config.js';
import type { Configured } from '../upstream/configured.js';

export type OpenAiConfig = Config['engines']['openai'];

/** The configuration of a usable OpenAI account: the key is there. */
export type OpenAiSetup = OpenAiConfig & { apiKey: string };

export function openAiSetup(config: OpenAiConfig): Configured<OpenAiSetup> {
  return config.apiKey ? { ...config, apiKey: config.apiKey } : { missingSetting: 'OPENAI_API_KEY' };
}
