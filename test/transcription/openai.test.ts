import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TranscriptionError, type TranscriptionEngine } from '../../src/transcription/engine.js';
import { languageCodeFrom } from '../../src/transcription/languages.js';
import { createOpenAiTranscriptionEngine, uploadFilename } from '../../src/transcription/openai.js';
import { LOCAL_TIMEOUT_MS } from '../engines/helpers.js';
import {
  startOpenAiTranscriptionStandIn,
  type OpenAiTranscriptionStandIn,
} from '../support/standins/openaiTranscriptionStandIn.js';

const fixture = (name: string) => readFile(new URL(`../fixtures/audio/${name}`, import.meta.url));

let standIn: OpenAiTranscriptionStandIn;
let webm: Buffer;

beforeAll(async () => {
  standIn = await startOpenAiTranscriptionStandIn();
  webm = await fixture('chromium-opus.webm');
});
afterAll(async () => {
  await standIn.close();
});
beforeEach(() => standIn.reset());

function engine(model: string, overrides: { apiKey?: string; maxRetries?: number; timeoutMs?: number } = {}): TranscriptionEngine {
  return createOpenAiTranscriptionEngine({
    apiKey: overrides.apiKey ?? standIn.apiKey,
    baseUrl: standIn.baseUrl,
    model,
    maxRetries: overrides.maxRetries ?? 2,
    timeoutMs: overrides.timeoutMs ?? LOCAL_TIMEOUT_MS,
  });
}

async function transcriptionError(promise: Promise<unknown>): Promise<TranscriptionError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TranscriptionError);
    return error as TranscriptionError;
  }
  throw new Error('expected a TranscriptionError');
}

const audio = () => ({ data: webm, mimeType: 'audio/webm', filename: 'voice.webm' });

describe('OpenAI transcription engine (against the local stand-in)', () => {
  it('gpt-4o-mini-transcribe: the transcript comes back; json carries no language', async () => {
    const stt = engine('gpt-4o-mini-transcribe');
    expect(stt).toMatchObject({ name: 'openai', model: 'gpt-4o-mini-transcribe' });
    const result = await stt.transcribe(audio(), {});
    expect(result).toEqual({ text: 'Hei, tämä on ääniviesti.', language: null });
  });

  it('the real file bytes, its name and type, the model and the key reach the upstream', async () => {
    await engine('gpt-4o-mini-transcribe').transcribe(audio(), { language: null });
    expect(standIn.requests).toHaveLength(1);
    const [request] = standIn.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/v1/audio/transcriptions');
    expect(request!.headers.authorization).toBe(`Bearer ${standIn.apiKey}`);
    expect(request!.fields).toMatchObject({ model: 'gpt-4o-mini-transcribe', response_format: 'json' });
    expect(request!.fields.language).toBeUndefined();
    expect(request!.file).toMatchObject({ filename: 'voice.webm', mimeType: 'audio/webm', bytes: webm.length });
    expect(request!.file!.data.equals(webm)).toBe(true);
  });

  it('whisper-1: verbose_json gives the language, its English name mapped to a code', async () => {
    const result = await engine('whisper-1').transcribe(audio(), {});
    expect(result).toEqual({ text: 'Hei, tämä on ääniviesti.', language: 'fi' });
    expect(standIn.requests[0]!.fields).toMatchObject({ model: 'whisper-1', response_format: 'verbose_json' });
  });

  it('a language hint is sent as its ISO 639-1 base code', async () => {
    const result = await engine('whisper-1').transcribe(audio(), { language: 'pt-BR' });
    expect(standIn.requests[0]!.fields.language).toBe('pt');
    expect(result.language).toBe('pt'); // whisper answers "portuguese"
    await engine('gpt-4o-mini-transcribe').transcribe(audio(), { language: 'FI' });
    expect(standIn.requests[1]!.fields.language).toBe('fi');
  });

  it('the upload name gets the extension of the MIME type (OpenAI reads the format from it)', async () => {
    const mp4 = await fixture('chromium-opus.mp4');
    await engine('gpt-4o-mini-transcribe').transcribe({ data: mp4, mimeType: 'audio/mp4', filename: 'recording' }, {});
    expect(standIn.requests[0]!.file).toMatchObject({ filename: 'recording.mp4', mimeType: 'audio/mp4', bytes: mp4.length });
    expect(uploadFilename('voice.mp3', 'audio/webm')).toBe('voice.webm');
    expect(uploadFilename('memo.M4A', 'audio/mp4')).toBe('memo.M4A');
    expect(uploadFilename('../../etc/x.ogg', 'audio/ogg')).toBe('x.ogg');
    expect(uploadFilename('', 'audio/mpeg')).toBe('audio.mp3');
  });

  it('429 then success: retried by the SDK, the file sent again in full', async () => {
    standIn.failNext(1, 429, undefined, { 'retry-after-ms': '10' });
    const result = await engine('gpt-4o-mini-transcribe').transcribe(audio(), {});
    expect(result.text).toBe('Hei, tämä on ääniviesti.');
    expect(standIn.requests.map((request) => request.status)).toEqual([429, 200]);
    expect(standIn.requests.map((request) => request.file?.bytes)).toEqual([webm.length, webm.length]);
  });

  it('401 -> TranscriptionError naming the status, not retried', async () => {
    const error = await transcriptionError(
      engine('gpt-4o-mini-transcribe', { apiKey: 'sk-wrong' }).transcribe(audio(), {}),
    );
    expect(error.engine).toBe('openai');
    expect(error.status).toBe(401);
    expect(error.message).toContain('401');
    expect(error.message).toContain('Incorrect API key');
    expect(standIn.requests).toHaveLength(1);
  });

  it('a lasting 503 -> TranscriptionError after the retries', async () => {
    standIn.failNext(5, 503, undefined, { 'retry-after-ms': '5' });
    const error = await transcriptionError(engine('gpt-4o-mini-transcribe', { maxRetries: 1 }).transcribe(audio(), {}));
    expect(error.status).toBe(503);
    expect(error.message).toMatch(/503 after 2 attempts/);
    expect(standIn.requests).toHaveLength(2);
  });

  it('no answer in time -> TranscriptionError without a status', async () => {
    standIn.hang(2_000);
    const error = await transcriptionError(
      engine('gpt-4o-mini-transcribe', { maxRetries: 0, timeoutMs: 200 }).transcribe(audio(), {}),
    );
    expect(error.status).toBeNull();
    expect(error.message).toContain('did not answer within 0.2 s');
  });

  it('audio the upstream cannot read -> TranscriptionError with its 400', async () => {
    const text = await fixture('not-audio.mp3');
    const error = await transcriptionError(
      engine('gpt-4o-mini-transcribe').transcribe({ data: text, mimeType: 'audio/mpeg', filename: 'x.mp3' }, {}),
    );
    expect(error.status).toBe(400);
    expect(error.message).toContain('corrupted or unsupported');
  });
});

describe('language names and codes from upstreams', () => {
  it.each([
    ['finnish', 'fi'],
    ['Finnish', 'fi'],
    ['english', 'en'],
    ['haitian creole', 'ht'],
    ['cantonese', 'yue'],
    ['hawaiian', 'haw'],
    ['fi', 'fi'],
    ['fi-FI', 'fi'],
    ['pt_BR', 'pt'],
    ['jw', 'jv'],
    ['klingon', null],
    ['und', null],
    ['', null],
    [null, null],
  ])('%s -> %s', (input, code) => {
    expect(languageCodeFrom(input)).toBe(code);
  });
});
