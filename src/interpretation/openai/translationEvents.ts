// Wire events of OpenAI's realtime translation endpoint (`<realtime URL>/translations?model=...`):
// no turns and no responses; audio is appended continuously (silence included) and translated audio
// and transcript deltas come back. Facts: /work/shared/PROTOCOLS.md ("OpenAI realtime translation").

import type { AudioBase64, ServerErrorEvent } from './events.js';

// --- client events ------------------------------------------------------------------------------------

/** Only `audio.output.language`, `audio.input.transcription` and `audio.input.noise_reduction` can change. */
export interface TranslationSessionUpdate {
  type: 'session.update';
  session: {
    audio: {
      input?: {
        transcription?: { model: string };
        noise_reduction?: { type: 'near_field' | 'far_field' } | null;
      };
      output?: { language: string };
    };
  };
}

/** Consumed in 200 ms frames (9,600 bytes of 24 kHz PCM16). */
export interface TranslationAudioAppend {
  type: 'session.input_audio_buffer.append';
  audio: AudioBase64;
}

/** The server flushes what it has, sends `session.closed`, then closes the socket. */
export interface TranslationSessionClose {
  type: 'session.close';
}

export type TranslationClientEvent = TranslationSessionUpdate | TranslationAudioAppend | TranslationSessionClose;

// --- server events ------------------------------------------------------------------------------------

export interface TranslationSessionCreated {
  type: 'session.created';
  session?: Record<string, unknown>;
}

/** Confirms our session.update: the session is configured and audio may flow. */
export interface TranslationSessionUpdated {
  type: 'session.updated';
  session?: Record<string, unknown>;
}

export interface TranslationSessionClosed {
  type: 'session.closed';
  reason?: string;
}

/** The speaker's words, append-only (only when input transcription is configured). */
export interface TranslationInputTranscriptDelta {
  type: 'session.input_transcript.delta';
  delta: string;
  elapsed_ms?: number;
}

/** The interpretation's words, append-only. */
export interface TranslationOutputTranscriptDelta {
  type: 'session.output_transcript.delta';
  delta: string;
  elapsed_ms?: number;
}

export interface TranslationOutputAudioDelta {
  type: 'session.output_audio.delta';
  delta: AudioBase64;
  sample_rate?: number;
  channels?: number;
  format?: string;
  elapsed_ms?: number;
}

export type TranslationServerEvent =
  | ServerErrorEvent
  | TranslationSessionCreated
  | TranslationSessionUpdated
  | TranslationSessionClosed
  | TranslationInputTranscriptDelta
  | TranslationOutputTranscriptDelta
  | TranslationOutputAudioDelta;
