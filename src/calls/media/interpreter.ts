// The live interpreter the media plane drives: one per direction of a live call (speaker's language ->
// listener's language). Engines implement it (the OpenAI realtime one lives with the engines); the
// media plane takes the factory as a parameter and never knows which engine it talks to.
import type { Mode } from '../../auth/principal.js';

export interface InterpreterCaption {
  /** False while the text may still change; partial captions of one utterance share an id downstream. */
  final: boolean;
  /** What the speaker said, in the source language ('' when the engine gives no input transcript). */
  original: string;
  /** The interpretation, in the target language. */
  translated: string;
}

export interface InterpreterStatus {
  /**
   * connected: audio is being interpreted; the media plane bills the call while any direction is
   *   connected (report it once the upstream session is up, and again after a reconnect).
   * reconnecting: the upstream is lost and being re-established; billing pauses; audio pushed meanwhile
   *   may be dropped.
   * failed: final; the media plane closes the interpreter, tells the listener, and relays the speaker
   *   untranslated. `message` is shown to the listener.
   */
  state: 'connected' | 'reconnecting' | 'failed';
  message?: string;
}

export interface InterpreterOptions {
  sourceLanguage: string;
  targetLanguage: string;
  /** Interpreted speech, mono PCM16 LE 24 kHz, any length, in order. */
  onAudio(pcm24k: Buffer): void;
  onCaption(caption: InterpreterCaption): void;
  onStatus(status: InterpreterStatus): void;
  /**
   * A new turn of interpreted speech begins; the audio that follows is its own. A listener still
   * playing an earlier turn is behind the conversation (a phone drops what it has queued). Optional
   * for engines that cannot tell turns apart.
   */
  onTurnStart?(): void;
}

export interface Interpreter {
  /** The speaker's voice, mono PCM16 LE 24 kHz, in order; never blocks (buffer or drop inside). */
  push(pcm24k: Buffer): void;
  /** Stops interpreting and releases the upstream; callbacks after close are ignored. */
  close(): Promise<void>;
  /** Shown to listeners as `{type:"provenance", engine, model}`; optional. */
  readonly provenance?: { engine: string; model: string };
}

/**
 * Makes an interpreter for one direction. It must not throw (a throw is treated as `failed`); it may
 * call the callbacks synchronously, even before it returns.
 */
export type InterpreterFactory = (opts: InterpreterOptions) => Interpreter;

/** How a call's audio reaches the other side: echoed back (test mode) or interpreted. */
export type Echo = { kind: 'echo' };
export type Interpret = { kind: 'interpret'; factory: InterpreterFactory };
export type Interpretation = Echo | Interpret;

/** Decides per call mode: echo (test) or interpret, and with which engine (live). */
export interface Interpreters {
  interpretation(mode: 'test'): Echo;
  interpretation(mode: 'live'): Interpret;
  interpretation(mode: Mode): Interpretation;
}
