// One direction of a live call interpreted by OpenAI: the speaker's audio cut into 200 ms frames and
// streamed through a reconnecting socket (../../upstream/reconnectingSocket.ts) to one of the two
// endpoints (./translationWire.ts, ./realtimeWire.ts); interpreted audio and captions back to the
// media plane; the socket's status reported as the interpreter's.
//
// Memory is bounded: pushes are cut into 200 ms frames (less than one frame held); while no session is
// up only the newest `maxQueuedMs` of audio is kept; while the socket's send buffer is above
// `maxBufferedBytes` (slow upstream) new frames are dropped. push() and close() never throw.

import type { Interpreter, InterpreterOptions, InterpreterStatus } from '../../calls/media/interpreter.js';
import { errorMessage } from '../../upstream/failureText.js';
import { ReconnectingSocket } from '../../upstream/reconnectingSocket.js';
import type { UpstreamFailure, UpstreamStatus } from '../../upstream/socketTypes.js';
import { FRAME_BYTES, FrameBatcher } from '../audioFrames.js';
import { translationModelSpeaks } from '../languages.js';
import { parseIncomingEvent, readText, type ServerErrorEvent } from './events.js';
import { RealtimeWire } from './realtimeWire.js';
import type { InterpreterLogLevel, Settings } from './settings.js';
import { TranslationWire } from './translationWire.js';
import type { ClientEvent, Wire, WireContext } from './wire.js';

const AUTH_ERROR_CODES = new Set(['invalid_api_key', 'invalid_authentication', 'unauthorized', 'authentication_error']);

/** Which endpoint a target language goes to. */
export function openAiInterpreterRoute(targetLanguage: string, translationLanguages?: readonly string[]): 'translation' | 'realtime' {
  return translationModelSpeaks(targetLanguage, translationLanguages) ? 'translation' : 'realtime';
}

function failureMessage(failure: UpstreamFailure): string {
  switch (failure.reason) {
    case 'cannot_open':
      return `cannot open the OpenAI realtime connection: ${failure.problem}`;
    case 'refused':
      return `OpenAI refused the realtime connection (HTTP ${failure.status}): check OPENAI_API_KEY and the account's access`;
    case 'rejected':
      return failure.problem;
    case 'gave_up': {
      const attempts = `${failure.attempts} reconnect attempt${failure.attempts === 1 ? '' : 's'}`;
      return `OpenAI live interpretation unavailable: ${attempts} failed (last: ${failure.problem})`;
    }
  }
}

export class OpenAiRealtimeInterpreter implements Interpreter {
  readonly provenance: { engine: string; model: string };
  private readonly wire: Wire;
  private readonly socket: ReconnectingSocket;
  private readonly details: Record<string, unknown>;
  private readonly batcher = new FrameBatcher(FRAME_BYTES);
  /** Failed (final) or closed: no more audio, no more callbacks after closed. */
  private ended: 'failed' | 'closed' | null = null;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly settings: Settings,
    private readonly options: InterpreterOptions,
  ) {
    const ctx: WireContext = {
      ready: () => this.socket.ready(),
      audio: (pcm) => this.callback(() => this.options.onAudio(pcm)),
      turn: () => this.callback(() => this.options.onTurnStart?.()),
      caption: (caption) => this.callback(() => this.options.onCaption(caption)),
      send: (event) => this.socket.send(encode(event)),
      log: (level, message, details) => this.log(level, message, details),
    };
    this.wire =
      openAiInterpreterRoute(options.targetLanguage, settings.translationLanguages) === 'translation'
        ? new TranslationWire(settings, options, ctx)
        : new RealtimeWire(settings, options, ctx);
    this.provenance = { engine: 'openai', model: this.wire.model };
    this.details = { source: options.sourceLanguage, target: options.targetLanguage, model: this.wire.model };
    this.socket = new ReconnectingSocket(
      {
        name: 'openai realtime',
        url: this.wire.url,
        headers: { Authorization: `Bearer ${settings.apiKey}` },
        setupTimeoutMs: settings.setupTimeoutMs,
        reconnect: settings.reconnect,
        maxQueued: settings.maxQueuedFrames,
        maxBufferedBytes: settings.maxBufferedBytes,
        closeTimeoutMs: settings.closeTimeoutMs,
        closeReason: 'interpretation ended',
        logger: (level, message, details) => this.log(level, message, details),
      },
      {
        onOpen: () => this.socket.send(encode(this.wire.sessionUpdate())),
        onMessage: (data, isBinary) => this.onMessage(data, isBinary),
        onConnectionLost: () => this.wire.connectionLost(),
        onStatus: (status) => this.onSocketStatus(status),
      },
    );
    if (!settings.apiKey) {
      queueMicrotask(() => this.fail('OpenAI live interpretation has no API key: set OPENAI_API_KEY'));
      return;
    }
    this.socket.start();
  }

  push(pcm24k: Buffer): void {
    try {
      if (this.ended || !pcm24k || !pcm24k.length) return;
      for (const frame of this.batcher.push(pcm24k)) this.socket.stream(encode(this.wire.append(frame.toString('base64'))));
    } catch (err) {
      this.log('warn', 'openai realtime: push failed', { err: errorMessage(err) });
    }
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    try {
      // Pending captions become final while callbacks still count.
      if (this.ended !== 'failed') this.wire.connectionLost();
      this.ended = 'closed';
      this.wire.dispose();
      const rest = this.batcher.drain();
      const tail = rest.subarray(0, rest.length - (rest.length % 2));
      const closeEvent = this.wire.closeEvent();
      const farewell: string[] = [];
      if (tail.length) farewell.push(encode(this.wire.append(tail.toString('base64'))));
      if (closeEvent) farewell.push(encode(closeEvent));
      this.closing = this.socket.close({ messages: farewell, upstreamCloses: closeEvent !== null });
    } catch (err) {
      this.log('warn', 'openai realtime: close failed', { err: errorMessage(err) });
      this.closing = Promise.resolve();
    }
    return this.closing;
  }

  // --- upstream -------------------------------------------------------------------------------------

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) return;
    const event = parseIncomingEvent(data);
    if (!event) {
      this.log('debug', 'openai realtime: ignored a non-JSON message');
      return;
    }
    try {
      if (event.type === 'error') this.onServerError(event as unknown as ServerErrorEvent);
      else this.wire.handle(event);
    } catch (err) {
      this.log('warn', 'openai realtime: failed to handle an upstream event', { type: event.type, err: errorMessage(err) });
    }
  }

  private onServerError(event: ServerErrorEvent): void {
    const error = event.error ?? {};
    const code = readText(error.code);
    const type = readText(error.type);
    const message = readText(error.message) || 'unknown error';
    this.log('warn', 'openai realtime: upstream error event', { type, code, message, param: error.param });
    this.socket.noteUpstreamError(code ? `${code}: ${message}` : message);
    if (AUTH_ERROR_CODES.has(code) || type === 'authentication_error') {
      this.socket.markFatal(`OpenAI rejected the credentials: ${message}`);
    }
  }

  private onSocketStatus(status: UpstreamStatus): void {
    switch (status.state) {
      case 'connected':
        this.status({ state: 'connected' });
        return;
      case 'reconnecting':
        this.status({ state: 'reconnecting', message: `upstream connection lost (${status.problem})` });
        return;
      case 'failed':
        this.fail(failureMessage(status.failure));
        return;
    }
  }

  private fail(message: string): void {
    if (this.ended) return;
    this.ended = 'failed';
    this.batcher.drain();
    this.wire.dispose();
    this.log('error', `openai realtime: ${message}`);
    this.status({ state: 'failed', message });
  }

  // --- helpers --------------------------------------------------------------------------------------

  private status(status: InterpreterStatus): void {
    this.callback(() => this.options.onStatus(status));
  }

  /** Runs a media-plane callback unless closed; a throwing callback is logged, never propagated. */
  private callback(fn: () => void): void {
    if (this.ended === 'closed') return;
    try {
      fn();
    } catch (err) {
      this.log('warn', 'openai realtime: an interpreter callback threw', { err: errorMessage(err) });
    }
  }

  private log(level: InterpreterLogLevel, message: string, details?: Record<string, unknown>): void {
    this.settings.logger(level, message, { ...this.details, ...details });
  }
}

const encode = (event: ClientEvent) => JSON.stringify(event);
