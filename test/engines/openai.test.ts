import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildSystemPrompt, createOpenAiEngine, type OpenAiEngineOptions } from '../../src/translation/engines/openai.js';
import { startOpenAiStandIn, type OpenAiStandIn } from '../support/standins/openaiStandIn.js';
import { LOCAL_TIMEOUT_MS, deadUrl, engineFailure } from './helpers.js';

let standIn: OpenAiStandIn;

beforeAll(async () => {
  standIn = await startOpenAiStandIn();
});
afterAll(async () => {
  await standIn.close();
});
beforeEach(() => standIn.reset());

const engine = (options: Partial<OpenAiEngineOptions> = {}) =>
  createOpenAiEngine({ apiKey: standIn.apiKey, baseUrl: standIn.baseUrl, model: 'gpt-4.1-mini', timeoutMs: LOCAL_TIMEOUT_MS, maxRetries: 2, ...options });

const request = { target: 'fi', source: null, context: null, glossary: null };
const fast = { 'retry-after-ms': '10' };

describe('openai engine', () => {
  it('translates a batch in order with one structured-output request and reports the detected languages', async () => {
    const openai = engine();
    expect(openai.name).toBe('openai');
    expect(openai.model).toBe('gpt-4.1-mini');

    const result = await openai.translate({ ...request, texts: ['Good morning', 'Hyvää yötä', 'Third one'] });

    expect(result).toEqual([
      { text: 'fi:Good morning', detectedSourceLanguage: 'en' },
      { text: 'fi:Hyvää yötä', detectedSourceLanguage: 'fi' },
      { text: 'fi:Third one', detectedSourceLanguage: 'en' },
    ]);
    const sent = standIn.completionRequests();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.model).toBe('gpt-4.1-mini');
    expect(sent[0]!.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'translations', strict: true },
    });
    const schema = sent[0]!.response_format!.json_schema!.schema as Record<string, any>;
    expect(schema.required).toEqual(['translations']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.translations.items.required).toEqual(['text', 'source_language']);
    const user = sent[0]!.messages.find((m) => m.role === 'user')!;
    expect(JSON.parse(user.content)).toEqual(['Good morning', 'Hyvää yötä', 'Third one']);
    expect(standIn.requests[0]!.headers.authorization).toBe(`Bearer ${standIn.apiKey}`);
  });

  it('puts target, source, context and glossary into the system instructions', async () => {
    const result = await engine({ model: 'gpt-test-model' }).translate({
      texts: ['Welcome to acme support', 'The acme app'],
      target: 'pt-BR',
      source: 'en',
      context: 'A customer support call about invoices',
      glossary: { Acme: 'ACME Oy' },
    });

    expect(result.map((r) => r.text)).toEqual(['pt-BR:Welcome to ACME Oy support', 'pt-BR:The ACME Oy app']);
    const sent = standIn.completionRequests()[0]!;
    expect(sent.model).toBe('gpt-test-model');
    const system = sent.messages.find((m) => m.role === 'system')!.content;
    expect(system).toContain('Brazilian Portuguese (language code: pt-BR)');
    expect(system).toContain('English (language code: en)');
    expect(system).toContain('Context (it steers wording');
    expect(system).toContain('A customer support call about invoices');
    expect(system).toContain('render these terms exactly so');
    expect(system).toContain('{"Acme":"ACME Oy"}');
    expect(system).toContain('translated faithfully, without commentary');
    expect(system).toContain('exactly 2 translations');
  });

  it('says the source is unknown when it is, and leaves context and glossary out when absent', () => {
    const prompt = buildSystemPrompt({ texts: ['x'], ...request }, 1);
    expect(prompt).toContain('The source language is not given');
    expect(prompt).not.toContain('Context');
    expect(prompt).not.toContain('Glossary');
    expect(prompt).toContain('exactly 1 translation:');
  });

  it('maps source_language to a lower-case base code, or null', async () => {
    standIn.answerNextWith(
      JSON.stringify({
        translations: [
          { text: 'a', source_language: 'pt-BR' },
          { text: 'b', source_language: 'EN' },
          { text: 'c', source_language: null },
          { text: 'd', source_language: 'unknown' },
        ],
      }),
    );
    const result = await engine().translate({ ...request, texts: ['1', '2', '3', '4'] });
    expect(result.map((r) => r.detectedSourceLanguage)).toEqual(['pt', 'en', null, null]);
  });

  it('turns an answer with the wrong count into an EngineError', async () => {
    standIn.answerNextWith(JSON.stringify({ translations: [{ text: 'only one', source_language: 'en' }] }));
    const error = await engineFailure(engine().translate({ ...request, texts: ['one', 'two'] }), 'openai');
    expect(error.message).toBe('openai answered 1 translations for 2 texts');
  });

  it('turns an answer that is not JSON into an EngineError', async () => {
    standIn.answerNextWith('Sure! Here are your translations: ...');
    const error = await engineFailure(engine().translate({ ...request, texts: ['one'] }), 'openai');
    expect(error.message).toContain('not JSON');
  });

  it('does not send blank texts and returns them unchanged', async () => {
    const result = await engine().translate({ ...request, texts: ['', 'Hello', '  '] });
    expect(result).toEqual([
      { text: '', detectedSourceLanguage: null },
      { text: 'fi:Hello', detectedSourceLanguage: 'en' },
      { text: '  ', detectedSourceLanguage: null },
    ]);
    const user = standIn.completionRequests()[0]!.messages.find((m) => m.role === 'user')!;
    expect(JSON.parse(user.content)).toEqual(['Hello']);
  });

  it('retries after a 429 and then succeeds', async () => {
    standIn.failNext(1, 429, undefined, fast);
    const result = await engine().translate({ ...request, texts: ['Hello'] });
    expect(result[0]!.text).toBe('fi:Hello');
    expect(standIn.requests).toHaveLength(2);
  });

  it('retries 5xx answers with the SDK backoff', async () => {
    standIn.failNext(1, 500);
    standIn.failNext(1, 503, undefined, fast);
    const started = Date.now();
    const result = await engine().translate({ ...request, texts: ['Hello'] });
    expect(result[0]!.text).toBe('fi:Hello');
    expect(standIn.requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300); // the 500 had no hint: default backoff (~0.4-0.5 s)
  });

  it('does not retry a 401 and names the status', async () => {
    const error = await engineFailure(
      engine({ apiKey: 'sk-wrong' }).translate({ ...request, texts: ['Hello'] }),
      'openai',
    );
    expect(error.message).toBe('openai answered 401 after 1 attempt: Incorrect API key provided.');
    expect(standIn.requests).toHaveLength(1);
  });

  it('gives up after the retries with an EngineError naming status and attempts', async () => {
    standIn.failNext(3, 429, undefined, fast);
    const error = await engineFailure(engine().translate({ ...request, texts: ['Hello'] }), 'openai');
    expect(error.message).toBe('openai answered 429 after 3 attempts: Rate limit reached for requests.');
    expect(standIn.requests).toHaveLength(3);
  });

  it('turns a hanging upstream into an EngineError within the timeout', async () => {
    // Held longer than the timeout: an engine that did not give up in time would get the answer and succeed.
    standIn.hang(10_000, 2);
    const error = await engineFailure(
      engine({ timeoutMs: 300, maxRetries: 1 }).translate({ ...request, texts: ['Hello'] }),
      'openai',
    );
    expect(error.message).toBe('openai did not answer within 0.3 s (2 attempts)');
    expect(standIn.requests).toHaveLength(2);
  });

  it('turns an unreachable upstream into an EngineError', async () => {
    const error = await engineFailure(
      engine({ baseUrl: `${await deadUrl()}/v1`, maxRetries: 0 }).translate({ ...request, texts: ['Hello'] }),
      'openai',
    );
    expect(error.message).toMatch(/^openai could not be reached after 1 attempt: Connection error/);
  });
});
