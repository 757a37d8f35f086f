// Speech-to-text through OpenAI's transcription endpoint (`POST /v1/audio/transcriptions`, multipart).
//
// - `whisper-1` answers `verbose_json`, which names the detected language (in English: `finnish`); it is
//   mapped to a code. The gpt-4o transcribe models answer `json` only ({text}): language null, and the caller
//   detects it from the text.
// - Retries are the SDK's own (408/409/429/5xx, connection errors, timeouts; with backoff and Retry-After);
//   the final failure becomes a TranscriptionError naming the upstream status.
// - OpenAI reads the format from the file name's extension, so the upload name is given the extension of
//   the (already inspected) MIME type.

import { AsyncLocalStorage } from 'node:async_hooks';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, toFile } from 'openai';
import {
  TranscriptionError,
  type TranscriptionAudio,
  type TranscriptionEngine,
  type TranscriptionOptions,
  type TranscriptionResult,
} from './engine.js';
import { baseLanguageCode, languageCodeFrom } from './languages.js';

export interface OpenAiTranscriptionOptions {
  apiKey: string;
  /** The SDK's base URL, `/v1` included: `https://api.openai.com/v1` (the default). */
  baseUrl?: string;
  /** `gpt-4o-mini-transcribe`, `gpt-4o-transcribe`, `whisper-1`, ... */
  model: string;
  /** Per attempt; default 60 s (a 2-minute recording takes a few seconds). */
  timeoutMs?: number;
  /** Retries after the first attempt (the SDK's backoff); default 2. */
  maxRetries?: number;
}

const ENGINE = 'openai';

/** Models that answer `verbose_json` (with the detected language); the others take `json` only. */
export function supportsVerboseJson(model: string): boolean {
  return model.startsWith('whisper');
}

/** Extensions OpenAI takes, per MIME type; the first is used when the file name has none of them. */
const EXTENSIONS: Readonly<Record<string, readonly string[]>> = {
  'audio/webm': ['webm'],
  'audio/ogg': ['ogg', 'oga', 'opus'],
  'audio/mp4': ['mp4', 'm4a'],
  'audio/m4a': ['m4a', 'mp4'],
  'audio/x-m4a': ['m4a', 'mp4'],
  'audio/mpeg': ['mp3', 'mpga', 'mpeg'],
  'audio/mp3': ['mp3', 'mpga', 'mpeg'],
  'audio/wav': ['wav'],
  'audio/x-wav': ['wav'],
  'audio/wave': ['wav'],
  'audio/flac': ['flac'],
};

/** The name to upload under: the base name, with an extension that matches `mimeType`. */
export function uploadFilename(filename: string, mimeType: string): string {
  const base = (filename.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f"]/g, '').trim() || 'audio';
  const extensions = EXTENSIONS[mimeType.split(';', 1)[0]!.trim().toLowerCase()];
  if (!extensions) return base;
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  const extension = dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
  return extensions.includes(extension) ? base : `${stem}.${extensions[0]}`;
}

export function createOpenAiTranscriptionEngine(opts: OpenAiTranscriptionOptions): TranscriptionEngine {
  const model = opts.model;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const verbose = supportsVerboseJson(model);
  // Counts the HTTP attempts of one transcribe() call (the SDK retries inside one create() call).
  const attemptCounter = new AsyncLocalStorage<{ count: number }>();
  const client = new OpenAI({
    apiKey: opts.apiKey,
    baseURL: opts.baseUrl,
    timeout: timeoutMs,
    maxRetries: opts.maxRetries ?? 2,
    fetch: ((input: string | URL | Request, init?: RequestInit) => {
      const counter = attemptCounter.getStore();
      // The SDK probes a custom fetch once with `data:,` (FormData support) before the first upload.
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (counter && !url.startsWith('data:')) counter.count += 1;
      return fetch(input, init);
    }) as typeof fetch,
  });

  async function transcribe(audio: TranscriptionAudio, options: TranscriptionOptions): Promise<TranscriptionResult> {
    const file = await toFile(audio.data, uploadFilename(audio.filename, audio.mimeType), { type: audio.mimeType });
    const language = baseLanguageCode(options.language);
    const counter = { count: 0 };
    try {
      if (verbose) {
        const answer = await attemptCounter.run(counter, () =>
          client.audio.transcriptions.create({
            file,
            model,
            response_format: 'verbose_json',
            ...(language ? { language } : {}),
          }),
        );
        return { text: textOf(answer), language: languageCodeFrom(answer.language) };
      }
      const answer = await attemptCounter.run(counter, () =>
        client.audio.transcriptions.create({
          file,
          model,
          response_format: 'json',
          ...(language ? { language } : {}),
        }),
      );
      // `json` carries no language today; take one if a future answer (or another server) gives it.
      const said = (answer as { language?: unknown }).language;
      return { text: textOf(answer), language: typeof said === 'string' ? languageCodeFrom(said) : null };
    } catch (error) {
      throw toTranscriptionError(error, counter.count || 1, timeoutMs);
    }
  }

  return { name: ENGINE, model, transcribe };
}

function textOf(answer: { text?: unknown }): string {
  if (typeof answer?.text !== 'string') {
    throw new TranscriptionError(ENGINE, 'openai answered without a transcript text');
  }
  return answer.text.trim();
}

function attempts(count: number): string {
  return count === 1 ? '1 attempt' : `${count} attempts`;
}

function shorten(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function toTranscriptionError(error: unknown, attemptCount: number, timeoutMs: number): TranscriptionError {
  if (error instanceof TranscriptionError) return error;
  // Subclasses of APIError first: a timeout and a connection failure carry no status.
  if (error instanceof APIConnectionTimeoutError) {
    return new TranscriptionError(
      ENGINE,
      `openai did not answer within ${timeoutMs / 1000} s (${attempts(attemptCount)})`,
      { cause: error },
    );
  }
  if (error instanceof APIConnectionError) {
    return new TranscriptionError(ENGINE, `openai could not be reached after ${attempts(attemptCount)}: ${shorten(error.message)}`, {
      cause: error,
    });
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const detail = error.error && typeof error.error === 'object' ? (error.error as { message?: unknown }).message : undefined;
    const text = typeof detail === 'string' && detail ? detail : error.message;
    return new TranscriptionError(ENGINE, `openai answered ${error.status} after ${attempts(attemptCount)}: ${shorten(text)}`, {
      status: error.status,
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new TranscriptionError(ENGINE, `openai transcription failed: ${shorten(message)}`, { cause: error });
}
