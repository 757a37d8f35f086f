// The engine for test-mode keys: no upstream, no cost, deterministic output (`[fi] Hello`).

import type { TranslationEngine } from '../engine.js';

export const testModeEngine: TranslationEngine = {
  name: 'test',
  model: 'stand-in',
  async translate(request) {
    return request.texts.map((text) => ({
      text: `[${request.target}] ${text}`,
      detectedSourceLanguage: request.source,
    }));
  },
};
