// Chooses the live interpretation engine for calls from configuration (docs/translation-and-billing.md, "Engines").
import type { Logger } from 'pino';
import type { InterpreterFactory } from '../calls/media/interpreter.js';
import type { Config } from '../config.js';
import type { Configured } from '../upstream/configured.js';
import { openAiSetup } from '../openai/setup.js';
import { createOpenAiInterpreterFactory } from './openai/index.js';

export function createInterpreterFactory(config: Config['engines'], logger: Logger): Configured<InterpreterFactory> {
  const openai = openAiSetup(config.openai);
  if ('missingSetting' in openai) return openai;
  return createOpenAiInterpreterFactory({
    apiKey: openai.apiKey,
    realtimeUrl: openai.realtimeUrl,
    translationModel: openai.realtimeTranslationModel,
    realtimeModel: openai.realtimeModel,
    setupTimeoutMs: openai.timeouts.realtimeSetupMs,
    reconnect: { maxAttempts: openai.retries.realtimeReconnects },
    logger: (level, message, details) => logger[level](details ?? {}, message),
  });
}
