// Chooses the live text translation engine from configuration (docs/translation-and-billing.md, "Engines").

import type { Config } from '../../config.js';
import type { Configured } from '../../upstream/configured.js';
import { openAiSetup } from '../../openai/setup.js';
import type { TranslationEngine } from '../engine.js';
import { createDeepLEngine } from './deepl.js';
import { createLibreTranslateEngine } from './libreTranslate.js';
import { createOpenAiEngine } from './openai.js';

export { createDeepLEngine } from './deepl.js';
export { createLibreTranslateEngine } from './libreTranslate.js';
export { createOpenAiEngine } from './openai.js';
export { testModeEngine } from './testStandIn.js';

export function createTranslationEngine(config: Config['engines']): Configured<TranslationEngine> {
  switch (config.translation) {
    case 'openai': {
      const openai = openAiSetup(config.openai);
      if ('missingSetting' in openai) return openai;
      return createOpenAiEngine({
        apiKey: openai.apiKey,
        baseUrl: openai.baseUrl,
        model: openai.translationModel,
        timeoutMs: openai.timeouts.translationMs,
        maxRetries: openai.retries.rest,
      });
    }
    case 'deepl':
      if (!config.deepl.apiKey) return { missingSetting: 'DEEPL_API_KEY' };
      return createDeepLEngine({ apiKey: config.deepl.apiKey, baseUrl: config.deepl.baseUrl });
    case 'libretranslate':
      if (!config.libreTranslate.url) return { missingSetting: 'LIBRETRANSLATE_URL' };
      return createLibreTranslateEngine({ url: config.libreTranslate.url, apiKey: config.libreTranslate.apiKey });
    default:
      return { missingSetting: 'TRANSLATION_ENGINE with OPENAI_API_KEY, DEEPL_API_KEY or LIBRETRANSLATE_URL' };
  }
}
