// The engine registry: per mode, which engine translates, transcribes and interprets; a live request
// without an engine is a 502 naming the setting; tests replace live engines in one place.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { InterpreterFactory, InterpreterStatus } from '../../src/calls/media/interpreter.js';
import { loadConfig } from '../../src/config.js';
import { createEngineRegistry } from '../../src/engines/registry.js';
import { ApiError } from '../../src/errors.js';
import { PLACEHOLDER_TRANSCRIPT } from '../../src/transcription/placeholder.js';
import type { TranslationEngine } from '../../src/translation/engine.js';

const silent = pino({ level: 'silent' });
const registryFor = (env: Record<string, string>) => createEngineRegistry(loadConfig(env).engines, silent);

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected an ApiError');
}

/** The statuses one interpreter of `factory` reports until a microtask has run. */
async function statusesOf(factory: InterpreterFactory): Promise<InterpreterStatus[]> {
  const statuses: InterpreterStatus[] = [];
  const interpreter = factory({
    sourceLanguage: 'en',
    targetLanguage: 'fi',
    onAudio: () => {},
    onCaption: () => {},
    onStatus: (status) => statuses.push(status),
  });
  interpreter.push(Buffer.alloc(4_800));
  await Promise.resolve();
  await interpreter.close();
  return statuses;
}

describe('engine registry: test mode', () => {
  it('uses the stand-ins, whatever is configured', async () => {
    const engines = registryFor({ OPENAI_API_KEY: 'sk-configured' });
    const translation = engines.translation('test');
    expect(translation).toMatchObject({ name: 'test', model: 'stand-in' });
    expect(await translation.translate({ texts: ['Hello'], target: 'fi', source: 'en', context: null, glossary: null })).toEqual([
      { text: '[fi] Hello', detectedSourceLanguage: 'en' },
    ]);
    const transcription = engines.transcription('test');
    expect(await transcription.transcribe({ data: Buffer.alloc(1), mimeType: 'audio/wav', filename: 'a.wav' }, { language: 'fi' })).toEqual({
      text: PLACEHOLDER_TRANSCRIPT,
      language: 'fi',
    });
    expect(engines.interpretation('test')).toEqual({ kind: 'echo' });
  });
});

describe('engine registry: live mode', () => {
  it('uses the configured OpenAI engines for all three jobs', () => {
    const engines = registryFor({ OPENAI_API_KEY: 'sk-configured' });
    expect(engines.translation('live')).toMatchObject({ name: 'openai', model: 'gpt-4.1-mini' });
    expect(engines.transcription('live')).toMatchObject({ name: 'openai', model: 'gpt-4o-mini-transcribe' });
    const interpretation = engines.interpretation('live');
    expect(interpretation.kind).toBe('interpret');
  });

  it('the translation engine the configuration names (DeepL) serves live translation; transcription still needs OpenAI', () => {
    const engines = registryFor({ DEEPL_API_KEY: 'deepl-key' });
    expect(engines.translation('live')).toMatchObject({ name: 'deepl' });
    const error = refusal(() => engines.transcription('live'));
    expect(error.status).toBe(502);
    expect(error.detail).toBe('no transcription engine is configured for live mode: set OPENAI_API_KEY');
  });

  it('without engines: 502 naming the setting for translation and transcription', () => {
    const engines = registryFor({});
    expect(refusal(() => engines.translation('live'))).toMatchObject({
      status: 502,
      detail: 'no translation engine is configured for live mode: set TRANSLATION_ENGINE with OPENAI_API_KEY, DEEPL_API_KEY or LIBRETRANSLATE_URL',
    });
    expect(refusal(() => engines.transcription('live'))).toMatchObject({
      status: 502,
      detail: 'no transcription engine is configured for live mode: set OPENAI_API_KEY',
    });
  });

  it('without an interpretation engine: interpreters report failed naming the setting, and take audio without throwing', async () => {
    const interpretation = registryFor({}).interpretation('live');
    expect(interpretation.kind).toBe('interpret');
    expect(await statusesOf(interpretation.factory)).toEqual([
      { state: 'failed', message: 'no interpretation engine configured: set OPENAI_API_KEY' },
    ]);
  });
});

describe('engine registry: replacing live engines (tests)', () => {
  it('replaceLive swaps the named engines for work started from then on and keeps the others', async () => {
    const engines = registryFor({});
    const standIn: TranslationEngine = {
      name: 'stand-in',
      model: 'm',
      translate: async (request) => request.texts.map((text) => ({ text, detectedSourceLanguage: null })),
    };
    const fake: InterpreterFactory = (options) => {
      queueMicrotask(() => options.onStatus({ state: 'connected' }));
      return { push() {}, async close() {}, provenance: { engine: 'fake', model: 'f' } };
    };
    engines.replaceLive({ translation: standIn, interpretation: fake });
    expect(engines.translation('live')).toBe(standIn);
    expect(engines.interpretation('live')).toEqual({ kind: 'interpret', factory: fake });
    expect(await statusesOf(engines.interpretation('live').factory)).toEqual([{ state: 'connected' }]);
    expect(refusal(() => engines.transcription('live')).status).toBe(502);
    // Test mode is not affected.
    expect(engines.translation('test')).toMatchObject({ name: 'test' });
    engines.replaceLive({ interpretation: { missingSetting: 'SOME_SETTING' } });
    expect(await statusesOf(engines.interpretation('live').factory)).toEqual([
      { state: 'failed', message: 'no interpretation engine configured: set SOME_SETTING' },
    ]);
  });

});
