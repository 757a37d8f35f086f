import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createDeepLEngine,
  deeplSourceLanguage,
  deeplTargetLanguage,
  type DeepLEngineOptions,
} from '../../src/translation/engines/deepl.js';
import { startDeepLStandIn, type DeepLStandIn } from '../support/standins/deeplStandIn.js';
import { LOCAL_TIMEOUT_MS, deadUrl, engineFailure } from './helpers.js';

let standIn: DeepLStandIn;

beforeAll(async () => {
  standIn = await startDeepLStandIn();
});
afterAll(async () => {
  await standIn.close();
});
beforeEach(() => {
  standIn.reset();
  standIn.glossaries.clear();
  standIn.unsupportedGlossaryPairs.clear();
});

const engine = (options: Partial<DeepLEngineOptions> = {}) =>
  createDeepLEngine({ apiKey: standIn.apiKey, baseUrl: standIn.url, timeoutMs: LOCAL_TIMEOUT_MS, maxRetries: 2, ...options });

const request = { target: 'fi', source: null, context: null, glossary: null };

describe('deepl language codes', () => {
  it('maps targets to what DeepL wants', () => {
    expect(deeplTargetLanguage('en')).toBe('en-US');
    expect(deeplTargetLanguage('EN')).toBe('en-US');
    expect(deeplTargetLanguage('en-GB')).toBe('en-GB');
    expect(deeplTargetLanguage('en-au')).toBe('en-GB');
    expect(deeplTargetLanguage('pt')).toBe('pt-PT');
    expect(deeplTargetLanguage('pt-BR')).toBe('pt-BR');
    expect(deeplTargetLanguage('zh-TW')).toBe('zh-HANT');
    expect(deeplTargetLanguage('zh')).toBe('zh-HANS');
    expect(deeplTargetLanguage('es-MX')).toBe('es-419');
    expect(deeplTargetLanguage('de-AT')).toBe('de');
    expect(deeplTargetLanguage('FI')).toBe('fi');
  });

  it('maps sources to base codes', () => {
    expect(deeplSourceLanguage('pt-BR')).toBe('pt');
    expect(deeplSourceLanguage('EN-us')).toBe('en');
  });
});

describe('deepl engine', () => {
  it('translates a batch in order with the mapped target and reports detected languages in lower case', async () => {
    const deepl = engine();
    expect(deepl.name).toBe('deepl');

    const result = await deepl.translate({ ...request, target: 'en', texts: ['Hyvää huomenta', 'Good', 'Third'] });

    expect(result).toEqual([
      { text: 'en-US:Hyvää huomenta', detectedSourceLanguage: 'fi' },
      { text: 'en-US:Good', detectedSourceLanguage: 'en' },
      { text: 'en-US:Third', detectedSourceLanguage: 'en' },
    ]);
    const [form] = standIn.translateRequests();
    expect(form!.getAll('text')).toEqual(['Hyvää huomenta', 'Good', 'Third']);
    expect(form!.get('target_lang')).toBe('en-US');
    expect(form!.has('source_lang')).toBe(false);
    expect(standIn.requests[0]!.headers.authorization).toBe(`DeepL-Auth-Key ${standIn.apiKey}`);
    expect(standIn.requests[0]!.headers['content-type']).toContain('application/x-www-form-urlencoded');
  });

  it('sends mapped target and base source codes, and the context', async () => {
    const result = await engine().translate({
      texts: ['Olá'],
      target: 'pt',
      source: 'pt-BR',
      context: 'A phone call with a bank',
      glossary: null,
    });
    await engine().translate({ ...request, texts: ['Hi'], target: 'pt-BR' });

    const [first, second] = standIn.translateRequests();
    expect(first!.get('target_lang')).toBe('pt-PT');
    expect(first!.get('source_lang')).toBe('pt');
    expect(first!.get('context')).toBe('A phone call with a bank');
    expect(result[0]!.detectedSourceLanguage).toBe('pt');
    expect(second!.get('target_lang')).toBe('pt-BR');
    expect(second!.has('context')).toBe(false);
  });

  it('creates a stored glossary once per (source, target, entries) and translates with it', async () => {
    const deepl = engine();
    const glossaryRequest = { target: 'fi', source: 'en', context: null, glossary: { Acme: 'ACME Oy', 'sign-in': 'kirjautuminen' } };

    const first = await deepl.translate({ ...glossaryRequest, texts: ['The acme sign-in page'] });
    const second = await deepl.translate({ ...glossaryRequest, texts: ['Acme again'] });

    expect(first[0]!.text).toBe('fi:The ACME Oy kirjautuminen page');
    expect(second[0]!.text).toBe('fi:ACME Oy again');
    const creations = standIn.glossaryCreations();
    expect(creations).toHaveLength(1);
    expect(creations[0]!.get('source_lang')).toBe('en');
    expect(creations[0]!.get('target_lang')).toBe('fi');
    expect(creations[0]!.get('entries_format')).toBe('tsv');
    expect(creations[0]!.get('entries')).toBe('Acme\tACME Oy\nsign-in\tkirjautuminen');
    const [id] = [...standIn.glossaries.keys()];
    expect(standIn.translateRequests().map((form) => form.get('glossary_id'))).toEqual([id, id]);

    // Another glossary: a second stored glossary.
    await deepl.translate({ ...glossaryRequest, glossary: { Acme: 'Acme Oyj' }, texts: ['Acme'] });
    expect(standIn.glossaryCreations()).toHaveLength(2);

    // A new engine (a restarted process) finds the glossary it made by name instead of creating it again.
    await engine().translate({ ...glossaryRequest, texts: ['Acme'] });
    expect(standIn.glossaryCreations()).toHaveLength(2);
    expect(standIn.translateRequests().at(-1)!.get('glossary_id')).toBe(id);
  });

  it('with an unknown source, learns the detected source first and re-translates the texts with terms', async () => {
    const result = await engine().translate({
      texts: ['Welcome to Acme', 'Hello there', 'Hyvää päivää'],
      target: 'de',
      source: null,
      context: 'support call',
      glossary: { Acme: 'ACME GmbH' },
    });

    expect(result).toEqual([
      { text: 'de:Welcome to ACME GmbH', detectedSourceLanguage: 'en' },
      { text: 'de:Hello there', detectedSourceLanguage: 'en' },
      { text: 'de:Hyvää päivää', detectedSourceLanguage: 'fi' },
    ]);
    const [firstPass, secondPass] = standIn.translateRequests();
    expect(firstPass!.has('glossary_id')).toBe(false);
    expect(firstPass!.has('source_lang')).toBe(false);
    expect(secondPass!.getAll('text')).toEqual(['Welcome to Acme']);
    expect(secondPass!.get('source_lang')).toBe('en');
    expect(secondPass!.get('context')).toBe('support call');
    expect(secondPass!.get('glossary_id')).toBe([...standIn.glossaries.keys()][0]);
    expect(standIn.translateRequests()).toHaveLength(2);
  });

  it('translates without the glossary when DeepL refuses the glossary pair, and does not ask again', async () => {
    standIn.unsupportedGlossaryPairs.add('en>fi');
    const deepl = engine();
    const glossaryRequest = { target: 'fi', source: 'en', context: null, glossary: { Acme: 'ACME Oy' } };

    const result = await deepl.translate({ ...glossaryRequest, texts: ['Acme'] });
    await deepl.translate({ ...glossaryRequest, texts: ['Acme'] });

    expect(result[0]!.text).toBe('fi:Acme');
    expect(standIn.glossaryCreations()).toHaveLength(1);
    expect(standIn.translateRequests().every((form) => !form.has('glossary_id'))).toBe(true);
  });

  it('creates the glossary again when DeepL lost it', async () => {
    const deepl = engine();
    const glossaryRequest = { target: 'fi', source: 'en', context: null, glossary: { Acme: 'ACME Oy' } };
    await deepl.translate({ ...glossaryRequest, texts: ['Acme'] });
    standIn.glossaries.clear();

    const result = await deepl.translate({ ...glossaryRequest, texts: ['Acme'] });

    expect(result[0]!.text).toBe('fi:ACME Oy');
    expect(standIn.glossaryCreations()).toHaveLength(2);
  });

  it('does not send blank texts (DeepL refuses them)', async () => {
    const result = await engine().translate({ ...request, texts: ['', 'Hi'] });
    expect(result).toEqual([
      { text: '', detectedSourceLanguage: null },
      { text: 'fi:Hi', detectedSourceLanguage: 'en' },
    ]);
    expect(standIn.translateRequests()[0]!.getAll('text')).toEqual(['Hi']);
  });

  it('retries after a 429 and then succeeds', async () => {
    standIn.failNext(1, 429);
    const result = await engine().translate({ ...request, texts: ['Hello'] });
    expect(result[0]!.text).toBe('fi:Hello');
    expect(standIn.requests).toHaveLength(2);
  });

  it('retries 5xx answers', async () => {
    standIn.failNext(1, 500);
    standIn.failNext(1, 503);
    const result = await engine().translate({ ...request, texts: ['Hello'] });
    expect(result[0]!.text).toBe('fi:Hello');
    expect(standIn.requests).toHaveLength(3);
  });

  it('does not retry 456 (quota exceeded) and names the status', async () => {
    standIn.failNext(1, 456);
    const error = await engineFailure(engine().translate({ ...request, texts: ['Hello'] }), 'deepl');
    expect(error.message).toBe(
      'deepl answered 456 after 1 attempt: Quota for this billing period has been exceeded, message: Quota Exceeded',
    );
    expect(standIn.requests).toHaveLength(1);
  });

  it('does not retry 403 (wrong key)', async () => {
    const error = await engineFailure(engine({ apiKey: 'wrong:fx' }).translate({ ...request, texts: ['Hello'] }), 'deepl');
    expect(error.message).toMatch(/^deepl answered 403 after 1 attempt: Authorization failure/);
    expect(standIn.requests).toHaveLength(1);
  });

  it('gives up after the retries with an EngineError naming status and attempts', async () => {
    standIn.failNext(2, 500);
    const error = await engineFailure(engine({ maxRetries: 1 }).translate({ ...request, texts: ['Hello'] }), 'deepl');
    expect(error.message).toMatch(/^deepl answered 500 after 2 attempts: Unexpected status code: 500/);
    expect(standIn.requests).toHaveLength(2);
  });

  it('turns a hanging upstream into an EngineError', async () => {
    // Held longer than the timeout: an engine that did not give up in time would get the answer and succeed.
    standIn.hang(10_000);
    const error = await engineFailure(
      engine({ timeoutMs: 300, maxRetries: 0 }).translate({ ...request, texts: ['Hello'] }),
      'deepl',
    );
    expect(error.message).toBe('deepl did not answer in time (timeout 0.3 s per attempt, 1 attempt)');
    expect(standIn.requests).toHaveLength(1);
  });

  it('turns an unreachable upstream into an EngineError', async () => {
    const error = await engineFailure(
      engine({ baseUrl: await deadUrl(), maxRetries: 0 }).translate({ ...request, texts: ['Hello'] }),
      'deepl',
    );
    expect(error.message).toMatch(/^deepl could not be reached after 1 attempt: Connection failure/);
  });
});
