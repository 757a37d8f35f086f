// Wire events of OpenAI's general realtime API (`<realtime URL>?model=...`) as this interpreter uses
// it: a translate-only session with server VAD, one response per speech turn. The GA names are listed
// with the older (beta) names some servers still send. Facts: /work/shared/PROTOCOLS.md.

import type { AudioBase64, ServerErrorEvent } from './events.js';

// --- client events ------------------------------------------------------------------------------------

export interface PcmFormat {
  type: 'audio/pcm';
  rate: number;
}

export type TurnDetection =
  | { type: 'server_vad'; create_response?: boolean; interrupt_response?: boolean; silence_duration_ms?: number }
  | { type: 'semantic_vad'; create_response?: boolean; interrupt_response?: boolean; eagerness?: 'auto' | 'low' | 'medium' | 'high' };

export interface RealtimeSessionUpdate {
  type: 'session.update';
  session: {
    type: 'realtime';
    instructions: string;
    output_modalities: Array<'audio' | 'text'>;
    audio: {
      input: {
        format: PcmFormat;
        turn_detection: TurnDetection;
        transcription: { model: string; language?: string };
      };
      output: { format: PcmFormat; voice: string };
    };
  };
}

export interface RealtimeAudioAppend {
  type: 'input_audio_buffer.append';
  audio: AudioBase64;
}

/** Asks for a response to what was committed (server VAD normally creates it itself). */
export interface RealtimeResponseCreate {
  type: 'response.create';
}

export type RealtimeClientEvent = RealtimeSessionUpdate | RealtimeAudioAppend | RealtimeResponseCreate;

// --- server events ------------------------------------------------------------------------------------

export interface RealtimeSessionCreated {
  type: 'session.created';
  session?: Record<string, unknown>;
}

export interface RealtimeSessionUpdated {
  type: 'session.updated';
  session?: Record<string, unknown>;
}

export interface SpeechBoundary {
  type: 'input_audio_buffer.speech_started' | 'input_audio_buffer.speech_stopped';
  item_id: string;
  audio_start_ms?: number;
  audio_end_ms?: number;
}

/** A speech turn became a conversation item. */
export interface InputCommitted {
  type: 'input_audio_buffer.committed';
  item_id: string;
  previous_item_id?: string | null;
}

export interface InputTranscriptionCompleted {
  type: 'conversation.item.input_audio_transcription.completed';
  item_id: string;
  transcript: string;
}

export interface InputTranscriptionFailed {
  type: 'conversation.item.input_audio_transcription.failed';
  item_id: string;
  error?: { type?: string; code?: string; message?: string };
}

export interface ResponseCreated {
  type: 'response.created';
  response: { id: string; status?: string };
}

export interface ResponseDone {
  type: 'response.done';
  response: { id: string; status?: string };
}

export interface OutputAudioDelta {
  /** GA name, and the beta name. */
  type: 'response.output_audio.delta' | 'response.audio.delta';
  response_id: string;
  item_id?: string;
  delta: AudioBase64;
}

export interface OutputTranscriptDelta {
  type: 'response.output_audio_transcript.delta' | 'response.audio_transcript.delta';
  response_id: string;
  item_id?: string;
  delta: string;
}

export interface OutputTranscriptDone {
  type: 'response.output_audio_transcript.done' | 'response.audio_transcript.done';
  response_id: string;
  item_id?: string;
  transcript?: string;
}

export interface RateLimitsUpdated {
  type: 'rate_limits.updated';
  rate_limits: Array<{ name: string; limit: number; remaining: number; reset_seconds: number }>;
}

export type RealtimeServerEvent =
  | ServerErrorEvent
  | RealtimeSessionCreated
  | RealtimeSessionUpdated
  | SpeechBoundary
  | InputCommitted
  | InputTranscriptionCompleted
  | InputTranscriptionFailed
  | ResponseCreated
  | ResponseDone
  | OutputAudioDelta
  | OutputTranscriptDelta
  | OutputTranscriptDone
  | RateLimitsUpdated;
