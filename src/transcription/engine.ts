// One interface for every speech-to-text engine (OpenAI, the test-mode placeholder, stand-ins in tests).
import type { Mode } from '../auth/principal.js';

export interface TranscriptionAudio {
  /** The recording as uploaded (already checked by `inspectAudio`). */
  data: Buffer;
  /** Canonical MIME type of the container (`audio/webm`, `audio/mp4`, `audio/mpeg`, `audio/ogg`, `audio/wav`). */
  mimeType: string;
  /** Name to upload under; upstreams read the format from its extension, so it should match `mimeType`. */
  filename: string;
}

export interface TranscriptionOptions {
  /** Language hint (e.g. `fi`, `pt-BR`); null or absent lets the engine detect it. */
  language?: string | null;
}

export interface TranscriptionResult {
  text: string;
  /** The spoken language as a lower-case base code (`fi`), when the engine says; null otherwise. */
  language: string | null;
}

export interface TranscriptionEngine {
  /** `openai`, `test`, ...: for provenance and logs. */
  readonly name: string;
  /** The model (e.g. `gpt-4o-mini-transcribe`). */
  readonly model: string;
  /** Throws TranscriptionError when the upstream fails for good (after the retries that were safe). */
  transcribe(audio: TranscriptionAudio, options: TranscriptionOptions): Promise<TranscriptionResult>;
}

/** The upstream failed for good; `status` is the upstream's last HTTP status when it answered at all. */
export class TranscriptionError extends Error {
  readonly engine: string;
  readonly status: number | null;

  constructor(engine: string, message: string, options: { status?: number | null; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'TranscriptionError';
    this.engine = engine;
    this.status = options.status ?? null;
  }
}

/** The speech-to-text engine for voice messages in a mode (the engine registry decides). */
export interface Transcribers {
  transcription(mode: Mode): TranscriptionEngine;
}
