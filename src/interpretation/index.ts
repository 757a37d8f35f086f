// Chooses the live interpretation engine for calls from configuration (DESIGN §7).
import type { Logger } from 'pino';
import { unconfiguredInterpreterFactory, type InterpreterFactory } from '../calls/media/interpreter.js';
import type { Config } from '../config.js';
import { createOpenAiInterpreterFactory } from './openaiRealtime.js';

export function createInterpreterFactory(config: Config['engines'], logger: Logger): InterpreterFactory {
  if (!config.openai.apiKey) return unconfiguredInterpreterFactory;
  return createOpenAiInterpreterFactory({
    apiKey: config.openai.apiKey,
    realtimeUrl: config.openai.realtimeUrl,
    translationModel: config.openai.realtimeTranslationModel,
    realtimeModel: config.openai.realtimeModel,
    logger: (level, message, details) => logger[level](details ?? {}, message),
  });
}
