import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTranslationEngine, testModeEngine } from '../../src/translation/engines/index.js';

const engines = (env: Record<string, string>) => loadConfig(env).engines;

describe('createTranslationEngine', () => {
  it('chooses the configured engine', () => {
    const openai = createTranslationEngine(engines({ OPENAI_API_KEY: 'sk-x', DEEPL_API_KEY: 'd' }));
    expect(openai).toMatchObject({ name: 'openai', model: 'gpt-4.1-mini' });
    const deepl = createTranslationEngine(engines({ TRANSLATION_ENGINE: 'deepl', OPENAI_API_KEY: 'sk-x', DEEPL_API_KEY: 'd' }));
    expect(deepl).toMatchObject({ name: 'deepl' });
    const libre = createTranslationEngine(engines({ LIBRETRANSLATE_URL: 'http://localhost:5000' }));
    expect(libre).toMatchObject({ name: 'libretranslate' });
  });

  it('names the missing setting', () => {
    expect(createTranslationEngine(engines({}))).toEqual({
      missingSetting: 'TRANSLATION_ENGINE with OPENAI_API_KEY, DEEPL_API_KEY or LIBRETRANSLATE_URL',
    });
    expect(createTranslationEngine(engines({ TRANSLATION_ENGINE: 'deepl', OPENAI_API_KEY: 'sk-x' }))).toEqual({
      missingSetting: 'DEEPL_API_KEY',
    });
    expect(createTranslationEngine(engines({ TRANSLATION_ENGINE: 'openai' }))).toEqual({ missingSetting: 'OPENAI_API_KEY' });
    expect(createTranslationEngine(engines({ TRANSLATION_ENGINE: 'libretranslate' }))).toEqual({
      missingSetting: 'LIBRETRANSLATE_URL',
    });
  });
});

describe('testModeEngine', () => {
  it('answers [<target>] <text> with the given source', async () => {
    expect(testModeEngine).toMatchObject({ name: 'test', model: 'stand-in' });
    const result = await testModeEngine.translate({
      texts: ['Hello', 'World'],
      target: 'fi',
      source: 'en',
      context: null,
      glossary: null,
    });
    expect(result).toEqual([
      { text: '[fi] Hello', detectedSourceLanguage: 'en' },
      { text: '[fi] World', detectedSourceLanguage: 'en' },
    ]);
  });
});
