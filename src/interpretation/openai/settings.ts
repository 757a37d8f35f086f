// The OpenAI realtime interpreter's options, their defaults, and the settings resolved from them.

import type { UpstreamLogger, UpstreamLogLevel } from '../../upstream/socketTypes.js';
import { FRAME_MS } from '../audioFrames.js';
import { TRANSLATION_OUTPUT_LANGUAGES } from '../languages.js';

export type InterpreterLogLevel = UpstreamLogLevel;
/** Optional log sink, e.g. `(level, msg, details) => logger[level](details ?? {}, msg)` for pino. */
export type InterpreterLogger = UpstreamLogger;

export interface ReconnectOptions {
  /** Delay before the first reconnect attempt of an outage (doubles per attempt). Default 500. */
  initialDelayMs?: number;
  /** Upper bound of the backoff delay. Default 8000. */
  maxDelayMs?: number;
  /** Reconnect attempts in a row (after a loss, or after a failed first connect) before `failed`. Default 6. */
  maxAttempts?: number;
}

export interface OpenAiInterpreterFactoryOptions {
  apiKey: string;
  /** `wss://api.openai.com/v1/realtime` or a local `ws://` stand-in; `/translations` is appended for the translation endpoint. */
  realtimeUrl: string;
  /** Default 'gpt-realtime-translate'. */
  translationModel?: string;
  /** Default 'gpt-realtime'; used for targets the translation model cannot speak. */
  realtimeModel?: string;
  /** Target languages the translation model speaks (primary subtags). Default TRANSLATION_OUTPUT_LANGUAGES. */
  translationLanguages?: readonly string[];
  /** Input transcription model on the translation endpoint. Default 'gpt-realtime-whisper'. */
  translationTranscriptionModel?: string;
  /** Input transcription model on the general realtime endpoint. Default 'gpt-4o-mini-transcribe'. */
  realtimeTranscriptionModel?: string;
  /** Output voice on the general realtime endpoint (the translation model adapts to the speaker). Default 'marin'. */
  voice?: string;
  reconnect?: ReconnectOptions;
  /** Caption finalisation pause (see ../captions.ts). Default 1200. */
  captionPauseMs?: number;
  /** Translation endpoint: finalise at a sentence end once the caption is this long. Default 240. */
  maxCaptionChars?: number;
  /** Audio kept while no session is up (newest kept, older dropped). Default 1000 (5 frames). */
  maxQueuedMs?: number;
  /** Frames are dropped while the socket has more than this many bytes unsent. Default 262144. */
  maxBufferedBytes?: number;
  /** Upgrade plus `session.update` confirmation must finish within this. Default 10000. */
  setupTimeoutMs?: number;
  /** close() waits this long for the upstream to flush and close before terminating. Default 2000. */
  closeTimeoutMs?: number;
  /** General realtime endpoint: send `response.create` when a committed turn got no response this long after the last one. Default 500. */
  responseFallbackMs?: number;
  logger?: InterpreterLogger;
}

export interface Settings {
  apiKey: string;
  realtimeUrl: string;
  translationModel: string;
  realtimeModel: string;
  translationLanguages: readonly string[];
  translationTranscriptionModel: string;
  realtimeTranscriptionModel: string;
  voice: string;
  reconnect: { initialDelayMs: number; maxDelayMs: number; maxAttempts: number };
  captionPauseMs: number;
  maxCaptionChars: number;
  maxQueuedFrames: number;
  maxBufferedBytes: number;
  setupTimeoutMs: number;
  closeTimeoutMs: number;
  responseFallbackMs: number;
  logger: InterpreterLogger;
}

export const DEFAULT_TRANSLATION_MODEL = 'gpt-realtime-translate';
export const DEFAULT_REALTIME_MODEL = 'gpt-realtime';

const nonNegative = (value: number | undefined, fallback: number) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;

export function resolveSettings(opts: OpenAiInterpreterFactoryOptions): Settings {
  const logger = opts.logger;
  return {
    apiKey: opts.apiKey ?? '',
    realtimeUrl: opts.realtimeUrl,
    translationModel: opts.translationModel || DEFAULT_TRANSLATION_MODEL,
    realtimeModel: opts.realtimeModel || DEFAULT_REALTIME_MODEL,
    translationLanguages: opts.translationLanguages ?? TRANSLATION_OUTPUT_LANGUAGES,
    translationTranscriptionModel: opts.translationTranscriptionModel || 'gpt-realtime-whisper',
    realtimeTranscriptionModel: opts.realtimeTranscriptionModel || 'gpt-4o-mini-transcribe',
    voice: opts.voice || 'marin',
    reconnect: {
      initialDelayMs: nonNegative(opts.reconnect?.initialDelayMs, 500),
      maxDelayMs: nonNegative(opts.reconnect?.maxDelayMs, 8_000),
      maxAttempts: Math.floor(nonNegative(opts.reconnect?.maxAttempts, 6)),
    },
    captionPauseMs: nonNegative(opts.captionPauseMs, 1_200),
    maxCaptionChars: nonNegative(opts.maxCaptionChars, 240),
    maxQueuedFrames: Math.ceil(nonNegative(opts.maxQueuedMs, 1_000) / FRAME_MS),
    maxBufferedBytes: nonNegative(opts.maxBufferedBytes, 256 * 1024),
    setupTimeoutMs: nonNegative(opts.setupTimeoutMs, 10_000) || 10_000,
    closeTimeoutMs: nonNegative(opts.closeTimeoutMs, 2_000),
    responseFallbackMs: nonNegative(opts.responseFallbackMs, 500),
    logger: (level, message, details) => {
      if (!logger) return;
      try {
        logger(level, message, details);
      } catch {
        // A broken logger must not break interpretation.
      }
    },
  };
}
