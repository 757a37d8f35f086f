// What the interpreter needs of an endpoint's protocol (a "wire"): its address, the events to set up a
// session, append audio and say goodbye, and the handling of what the upstream sends.

import type { CaptionSink } from '../captions.js';
import type { IncomingEvent } from './events.js';
import type { RealtimeClientEvent } from './realtimeEvents.js';
import type { InterpreterLogger } from './settings.js';
import type { TranslationClientEvent } from './translationEvents.js';

export type ClientEvent = TranslationClientEvent | RealtimeClientEvent;

/** What a wire may do to the interpreter. */
export interface WireContext {
  /** The session is configured: audio may flow. */
  ready(): void;
  audio(pcm: Buffer): void;
  /** A new turn of interpreted speech begins (before its first audio). */
  turn(): void;
  caption: CaptionSink;
  send(event: ClientEvent): void;
  log: InterpreterLogger;
}

export interface Wire {
  readonly model: string;
  readonly url: string;
  sessionUpdate(): ClientEvent;
  append(audioBase64: string): ClientEvent;
  /** Sent by close() (the upstream then flushes and closes); null: just close the socket. */
  closeEvent(): ClientEvent | null;
  /** Any server event but `error` (the interpreter handles that one for both endpoints). */
  handle(event: IncomingEvent): void;
  /** The connection ended (or is closing): pending captions become final; per-session state resets. */
  connectionLost(): void;
  dispose(): void;
}

/** `<base><path>?model=<model>`; refuses anything but ws:// and wss://. */
export function endpointUrl(base: string, path: string, model: string): string {
  const url = new URL(base);
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new Error(`realtimeUrl must be ws:// or wss://, got ${url.protocol}`);
  url.pathname = url.pathname.replace(/\/+$/, '') + path || '/';
  url.searchParams.set('model', model);
  return url.toString();
}
