// Speech-to-text through OpenAI's transcription endpoint (`POST /v1/audio/transcriptions`, multipart).
//
// - `whisper-1` answers `verbose_json`, which names the detected language (in English: `finnish`); it is
//   mapped to a code. The gpt-4o transcribe models answer `json` only ({text}): language null, and the caller
//   detects it from the text.
// - Retries are the SDK's own (408/409/429/5xx, connection errors, timeouts; with backoff and Retry-After);
//   the final failure becomes a TranscriptionError naming the upstream status.
// - OpenAI reads the format from the file name's extension, so the upload name is given the extension of
//   the (already inspected) MIME type.

import { createOpenAiRest, openAiSdk, OpenAiRequestError, type OpenAiRestOptions } from '../openai/rest.js';
import {
  TranscriptionError,
  type TranscriptionAudio,
  type TranscriptionEngine,
  type TranscriptionOptions,
  type TranscriptionResult,
} from './engine.js';
import { baseLanguageCode, languageCodeFrom } from './languages.js';

export interface OpenAiTranscriptionOptions extends OpenAiRestOptions {
  /** `gpt-4o-mini-transcribe`, `gpt-4o-transcribe`, `whisper-1`, ... */
  model: string;
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
  const verbose = supportsVerboseJson(model);
  const rest = createOpenAiRest(opts);

  async function transcribe(audio: TranscriptionAudio, options: TranscriptionOptions): Promise<TranscriptionResult> {
    const { toFile } = await openAiSdk();
    const file = await toFile(audio.data, uploadFilename(audio.filename, audio.mimeType), { type: audio.mimeType });
    const language = baseLanguageCode(options.language);
    try {
      if (verbose) {
        const answer = await rest.request((client) =>
          client.audio.transcriptions.create({
            file,
            model,
            response_format: 'verbose_json',
            ...(language ? { language } : {}),
          }),
        );
        return { text: textOf(answer), language: languageCodeFrom(answer.language) };
      }
      const answer = await rest.request((client) =>
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
      if (error instanceof OpenAiRequestError) {
        throw new TranscriptionError(ENGINE, error.message, { status: error.status, cause: error.cause });
      }
      throw error;
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
