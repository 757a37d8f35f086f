// A machine side of a call: join with the side's link (or its call id and key), send the side's voice
// as PCM16 frames on the stream socket, and read what it hears (WAV chunks, captions, provenance,
// notices) from the listen socket. Socket addresses and credentials come from the join answer.
import createFetchClient from 'openapi-fetch';
import { connectionOf, unwrap } from './http.js';
import type { components, paths } from './schema.js';

export type JoinOut = components['schemas']['JoinOut'];
export type CallSideSettings = components['schemas']['CallSideSettingsIn'];

/** Mono PCM16 little-endian at 24 kHz, both ways. */
export const SAMPLE_RATE = 24_000;
/** The most audio one stream frame may hold: one second. */
export const MAX_FRAME_BYTES = SAMPLE_RATE * 2;
/** Each listen chunk is a complete WAV file: this header, then the samples. */
export const WAV_HEADER_BYTES = 44;

/** What a listen socket carries, audio and JSON text frames alike. */
export type ListenMessage =
  | { type: 'audio'; wav: Uint8Array; pcm: Uint8Array }
  | { type: 'provenance'; engine: string; model: string }
  | { type: 'caption'; id: string; final: boolean; original: string; translated: string; language: string; source_language: string }
  | { type: 'notice'; code: string; message: string };

/** How a socket closed: 4000 call ended, 4001 link replaced, 4002 reconnect, 4003 source replaced, 4004 left. */
export interface Closed {
  code: number;
  reason: string;
}

export interface CallSideTarget {
  baseUrl: string;
  callId: string;
  callKey: string;
}

export interface CallSideOptions {
  fetch?: typeof fetch;
  /** A WebSocket class; default: the global one where there is one, else the `ws` package's. */
  WebSocket?: typeof WebSocket;
}

/** A side's link, `{base}/call/{call_id}#k=<key>`, as the API returns it. */
export function parseCallLink(link: string): CallSideTarget {
  const url = new URL(link);
  const match = /^(.*)\/call\/([^/]+)$/.exec(url.pathname);
  const callKey = new URLSearchParams(url.hash.slice(1)).get('k');
  if (!match || !callKey) throw new Error('not a call link: expected {base}/call/{call_id}#k=<key>');
  return { baseUrl: `${url.origin}${match[1]}`, callId: decodeURIComponent(match[2]), callKey };
}

async function webSocketClass(options: CallSideOptions): Promise<typeof WebSocket> {
  if (options.WebSocket) return options.WebSocket;
  if (typeof globalThis.WebSocket === 'function') return globalThis.WebSocket;
  return (await import('ws')).WebSocket as unknown as typeof WebSocket;
}

function open(WebSocketImpl: typeof WebSocket, url: string): Promise<WebSocket> {
  const socket = new WebSocketImpl(url);
  socket.binaryType = 'arraybuffer';
  return new Promise((resolve, reject) => {
    const failed = () => reject(new Error(`could not open ${new URL(url).pathname}: refused or unreachable (join again for fresh credentials)`));
    socket.addEventListener('error', failed, { once: true });
    socket.addEventListener('open', () => {
      socket.removeEventListener('error', failed);
      resolve(socket);
    }, { once: true });
  });
}

const closedOf = (socket: WebSocket): Promise<Closed> =>
  new Promise((resolve) => socket.addEventListener('close', (event) => resolve({ code: event.code, reason: event.reason }), { once: true }));

/** The stream socket: what is sent here is this side's voice. */
export class StreamSocket {
  readonly closed: Promise<Closed>;
  constructor(private readonly socket: WebSocket) {
    this.closed = closedOf(socket);
  }

  /** Sends PCM16 (24 kHz mono, little-endian), cut into frames of at most one second. */
  send(pcm: Uint8Array): void {
    if (pcm.byteLength % 2) throw new RangeError('PCM16 needs whole 16-bit samples (an even number of bytes)');
    for (let at = 0; at < pcm.byteLength; at += MAX_FRAME_BYTES) {
      // slice, not subarray: a WebSocket sends only views on a plain ArrayBuffer (a browser refuses one on a
      // SharedArrayBuffer), and the copy leaves the caller free to reuse its buffer while the frame waits.
      this.socket.send(pcm.slice(at, Math.min(at + MAX_FRAME_BYTES, pcm.byteLength)));
    }
  }

  /** Bytes handed to `send` and not yet written to the network (pace a live source by it). */
  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  close(): Promise<Closed> {
    this.socket.close(1000);
    return this.closed;
  }
}

/** The listen socket: what this side hears, as an async iterator that ends when the socket closes. */
export class ListenSocket implements AsyncIterable<ListenMessage> {
  readonly closed: Promise<Closed>;
  private readonly queue: ListenMessage[] = [];
  private wake: (() => void) | undefined;
  private ended = false;

  constructor(private readonly socket: WebSocket) {
    this.closed = closedOf(socket);
    socket.addEventListener('message', (event) => {
      this.queue.push(messageOf(event.data));
      this.wake?.();
    });
    void this.closed.then(() => {
      this.ended = true;
      this.wake?.();
    });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ListenMessage> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  close(): Promise<Closed> {
    this.socket.close(1000);
    return this.closed;
  }
}

function messageOf(data: unknown): ListenMessage {
  if (typeof data === 'string') return JSON.parse(data) as ListenMessage;
  const wav = new Uint8Array(data as ArrayBuffer);
  return { type: 'audio', wav, pcm: wav.subarray(WAV_HEADER_BYTES) };
}

/** One side of a call, joined. */
export class CallSide {
  private readonly rest;
  private readonly request;

  /** The latest join answer: `ready`, languages, names and the media addresses. */
  info!: JoinOut;

  constructor(
    readonly target: CallSideTarget,
    private readonly options: CallSideOptions = {},
  ) {
    this.rest = createFetchClient<paths>({ baseUrl: target.baseUrl, fetch: connectionOf({ baseUrl: target.baseUrl, fetch: options.fetch }).fetch });
    this.request = { params: { path: { call_id: target.callId }, header: { 'X-Call-Key': target.callKey } } };
  }

  /** Joins again: after a language change, a `reconnect` notice, or while waiting for `ready`. */
  async refresh(): Promise<JoinOut> {
    return (this.info = await unwrap(this.rest.GET('/calls/public/{call_id}', this.request)));
  }

  /** Sets this side's language and/or name (a call waits for both languages before it is ready). */
  async update(settings: CallSideSettings): Promise<JoinOut> {
    return (this.info = await unwrap(this.rest.POST('/calls/public/{call_id}/me', { ...this.request, body: settings })));
  }

  /** Hangs up: the agent ends the call for both; the customer leaves and may join again. */
  async hangUp(): Promise<JoinOut> {
    return (this.info = await unwrap(this.rest.POST('/calls/public/{call_id}/end', this.request)));
  }

  /** Opens the stream socket; `sourceId` names this sender (several are mixed; the same one replaces). */
  async openStream(sourceId?: string): Promise<StreamSocket> {
    const stream = this.ready().stream!;
    const query = new URLSearchParams({ token: stream.token, source_id: sourceId ?? stream.source_id });
    return new StreamSocket(await open(await webSocketClass(this.options), `${this.socketBase()}${stream.path}?${query}`));
  }

  /** Opens the listen socket: the other side's voice (in test mode, this side's own, echoed). */
  async listen(): Promise<ListenSocket> {
    const listen = this.ready().listen!;
    const query = new URLSearchParams({ unlock: listen.unlock });
    return new ListenSocket(await open(await webSocketClass(this.options), `${this.socketBase()}${listen.path}?${query}`));
  }

  private ready(): JoinOut {
    if (!this.info.ready || !this.info.stream || !this.info.listen) {
      throw new Error('the call is not ready (a language is still unknown, or it has ended): update() or refresh() first');
    }
    return this.info;
  }

  private socketBase(): string {
    return new URL(this.target.baseUrl).origin.replace(/^http/, 'ws');
  }
}

/** Joins a call as the side whose link (or call id and key) is given. */
export async function joinCall(link: string | CallSideTarget, options: CallSideOptions = {}): Promise<CallSide> {
  const target = typeof link === 'string' ? parseCallLink(link) : { ...link, baseUrl: link.baseUrl.replace(/\/+$/, '') };
  const side = new CallSide(target, options);
  await side.refresh();
  return side;
}
