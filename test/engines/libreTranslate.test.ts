import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  applyGlossary,
  createLibreTranslateEngine,
  libreTranslateLanguage,
  type LibreTranslateEngineOptions,
} from '../../src/translation/engines/libreTranslate.js';
import { startLibreTranslateStandIn, type LibreTranslateStandIn } from '../support/standins/libreTranslateStandIn.js';
import { LOCAL_TIMEOUT_MS, deadUrl, engineFailure } from './helpers.js';

let standIn: LibreTranslateStandIn;
let keyedStandIn: LibreTranslateStandIn;

beforeAll(async () => {
  standIn = await startLibreTranslateStandIn();
  keyedStandIn = await startLibreTranslateStandIn({ apiKey: 'lt-secret' });
});
afterAll(async () => {
  await standIn.close();
  await keyedStandIn.close();
});
beforeEach(() => {
  standIn.reset();
  keyedStandIn.reset();
});

const engine = (options: Partial<LibreTranslateEngineOptions> = {}) =>
  createLibreTranslateEngine({ url: standIn.url, timeoutMs: LOCAL_TIMEOUT_MS, maxRetries: 2, retryDelayMs: 10, ...options });

const request = { target: 'fi', source: null, context: null, glossary: null };

describe('libretranslate glossary and language codes', () => {
  it('replaces whole words, any case, longest term first, never a rendering again', () => {
    const glossary = { Acme: 'ACME Oy', 'Acme Cloud': 'ACME Pilvi', Oy: 'NOPE', price: '$& total' };
    expect(applyGlossary('acme cloud and ACME, not acmeville or subacme', glossary)).toBe(
      'ACME Pilvi and ACME Oy, not acmeville or subacme',
    );
    expect(applyGlossary('the price.', glossary)).toBe('the $& total.');
    expect(applyGlossary('Hyvää päivää', { päivää: 'iltaa' })).toBe('Hyvää iltaa');
    expect(applyGlossary('text', null)).toBe('text');
  });

  it('maps codes to LibreTranslate codes', () => {
    expect(libreTranslateLanguage('pt-BR')).toBe('pb');
    expect(libreTranslateLanguage('pt')).toBe('pt');
    expect(libreTranslateLanguage('zh-TW')).toBe('zt');
    expect(libreTranslateLanguage('zh-Hans')).toBe('zh');
    expect(libreTranslateLanguage('EN-gb')).toBe('en');
  });
});

describe('libretranslate engine', () => {
  it('translates a batch in order with source auto and reports the detected languages', async () => {
    const libre = engine();
    expect(libre.name).toBe('libretranslate');

    const result = await libre.translate({ ...request, target: 'en', texts: ['Hyvää yötä', 'Good night', 'Third'] });

    expect(result).toEqual([
      { text: 'en:Hyvää yötä', detectedSourceLanguage: 'fi' },
      { text: 'en:Good night', detectedSourceLanguage: 'en' },
      { text: 'en:Third', detectedSourceLanguage: 'en' },
    ]);
    expect(standIn.translateRequests()).toEqual([
      { q: ['Hyvää yötä', 'Good night', 'Third'], source: 'auto', target: 'en', format: 'text' },
    ]);
  });

  it('maps target and source codes and reports the given source', async () => {
    const result = await engine().translate({ ...request, texts: ['Hello'], target: 'pt-BR', source: 'en-GB' });
    expect(result).toEqual([{ text: 'pb:Hello', detectedSourceLanguage: 'en' }]);
    expect(standIn.translateRequests()[0]).toMatchObject({ source: 'en', target: 'pb' });
  });

  it('applies the glossary to the source text before sending and ignores the context', async () => {
    const result = await engine().translate({
      texts: ['Call acme support', 'Nothing here'],
      target: 'fi',
      source: 'en',
      context: 'a support call',
      glossary: { Acme: 'ACME Oy' },
    });
    expect(result.map((r) => r.text)).toEqual(['fi:Call ACME Oy support', 'fi:Nothing here']);
    const sent = standIn.translateRequests()[0]!;
    expect(sent.q).toEqual(['Call ACME Oy support', 'Nothing here']);
    expect(sent).not.toHaveProperty('context');
  });

  it('sends the API key when configured', async () => {
    const result = await engine({ url: `${keyedStandIn.url}/`, apiKey: 'lt-secret' }).translate({ ...request, texts: ['Hi'] });
    expect(result[0]!.text).toBe('fi:Hi');
    expect(keyedStandIn.translateRequests()[0]!.api_key).toBe('lt-secret');
  });

  it('does not retry a 403 (wrong API key) and names the status and message', async () => {
    const error = await engineFailure(
      engine({ url: keyedStandIn.url, apiKey: 'wrong' }).translate({ ...request, texts: ['Hi'] }),
      'libretranslate',
    );
    expect(error.message).toBe('libretranslate answered 403 after 1 attempt: Invalid API key');
    expect(keyedStandIn.requests).toHaveLength(1);
  });

  it('does not retry a 400 (unsupported language)', async () => {
    const error = await engineFailure(engine().translate({ ...request, target: 'xx', texts: ['Hi'] }), 'libretranslate');
    expect(error.message).toBe('libretranslate answered 400 after 1 attempt: xx is not supported');
    expect(standIn.requests).toHaveLength(1);
  });

  it('retries after a 429, honouring Retry-After, then succeeds', async () => {
    standIn.failNext(1, 429, undefined, { 'retry-after': '1' });
    const started = Date.now();
    const result = await engine().translate({ ...request, texts: ['Hello'] });
    expect(result[0]!.text).toBe('fi:Hello');
    expect(standIn.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('retries 5xx answers', async () => {
    standIn.failNext(1, 500);
    standIn.failNext(1, 503, 'Bad Gateway (HTML page from a proxy)');
    const result = await engine().translate({ ...request, texts: ['Hello'] });
    expect(result[0]!.text).toBe('fi:Hello');
    expect(standIn.requests).toHaveLength(3);
  });

  it('gives up after the retries with an EngineError naming status and attempts', async () => {
    standIn.failNext(3, 503);
    const error = await engineFailure(engine().translate({ ...request, texts: ['Hello'] }), 'libretranslate');
    expect(error.message).toBe('libretranslate answered 503 after 3 attempts: Service unavailable');
    expect(standIn.requests).toHaveLength(3);
  });

  it('turns a hanging upstream into an EngineError within the timeout', async () => {
    // Held longer than the timeout: an engine that did not give up in time would get the answer and succeed.
    standIn.hang(10_000, 2);
    const error = await engineFailure(
      engine({ timeoutMs: 200, maxRetries: 1 }).translate({ ...request, texts: ['Hello'] }),
      'libretranslate',
    );
    expect(error.message).toBe('libretranslate did not answer within 0.2 s (2 attempts)');
    expect(standIn.requests).toHaveLength(2);
  });

  it('retries network errors and then gives up', async () => {
    const error = await engineFailure(
      engine({ url: await deadUrl() }).translate({ ...request, texts: ['Hello'] }),
      'libretranslate',
    );
    expect(error.message).toMatch(/^libretranslate could not be reached after 3 attempts: fetch failed \(.*ECONNREFUSED/);
  });

  it('turns an answer with the wrong count into an EngineError', async () => {
    // Scripted answer (failNext with 200): a server that dropped one of the texts.
    standIn.failNext(1, 200, { translatedText: ['only one'] });
    const error = await engineFailure(engine().translate({ ...request, texts: ['one', 'two'] }), 'libretranslate');
    expect(error.message).toBe('libretranslate answered 1 translations for 2 texts');
    expect(standIn.requests).toHaveLength(1);
  });
});
