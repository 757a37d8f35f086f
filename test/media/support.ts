// Helpers for media-plane tests: calls and joins over the API, WebSocket stream/listen/signal clients, and a
// scripted AudioSocket (PBX) client over TCP.
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { vi } from 'vitest';
import { WebSocket } from 'ws';
import { parseWavHeader, WAV_HEADER_BYTES } from '../../src/calls/media/audio/pcm.js';
import type { TestServer } from '../support/testServer.js';
import { trackWait } from '../support/waiting.js';

/** A server these helpers talk to: in this process or in a child (they need only its address). */
type Reachable = Pick<TestServer, 'url'>;

export interface Join {
  id: string;
  role: 'agent' | 'customer';
  ready: boolean;
  my_language: string | null;
  other_language: string | null;
  stream: { channel_id: string; path: string; source_id: string; token: string } | null;
  listen: { channel_id: string; path: string; unlock: string } | null;
}

export function callApi(t: Reachable) {
  const api = (path: string, key: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${t.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const side = (path: string, callKey: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${t.url}/calls/public${path}`, {
      method: init.method ?? 'GET',
      headers: { 'X-Call-Key': callKey, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const keyOf = (url: string) => url.split('#k=')[1];
  return {
    api,
    side,
    keyOf,
    async createCall(key: string, body: Record<string, unknown> = {}) {
      const res = await api('/v1/calls', key, { method: 'POST', body: { agent_language: 'en', ...body } });
      if (res.status !== 201) throw new Error(`create call: ${res.status} ${await res.text()}`);
      const call = await res.json();
      return { id: call.id as string, agentKey: keyOf(call.agent_url), customerKey: keyOf(call.customer_url) };
    },
    async join(callId: string, callKey: string): Promise<Join> {
      const res = await side(`/${callId}`, callKey);
      if (res.status !== 200) throw new Error(`join: ${res.status}`);
      return res.json();
    },
    async setLanguage(callId: string, callKey: string, language: string): Promise<Join> {
      const res = await side(`/${callId}/me`, callKey, { method: 'POST', body: { language } });
      if (res.status !== 200) throw new Error(`me: ${res.status}`);
      return res.json();
    },
  };
}

export const wsBase = (t: Reachable) => t.url.replace(/^http/, 'ws');
export const streamUrl = (t: Reachable, join: Join) =>
  `${wsBase(t)}${join.stream!.path}?token=${encodeURIComponent(join.stream!.token)}&source_id=${encodeURIComponent(join.stream!.source_id)}`;
export const listenUrl = (t: Reachable, join: Join) => `${wsBase(t)}${join.listen!.path}?unlock=${encodeURIComponent(join.listen!.unlock)}`;

export interface Closed {
  code: number;
  reason: string;
}

/** Opens a WebSocket; resolves once open, or rejects with the HTTP refusal (status and body). */
/**
 * Resolves once the server has answered a ping sent after everything sent so far: it has read those
 * frames, and closed the socket by now if one of them broke a rule. Rejects if the socket closes first.
 */
export function roundTrip(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    const closed = () => reject(new Error('the socket closed before the ping was answered'));
    ws.once('close', closed);
    ws.once('pong', () => {
      ws.off('close', closed);
      resolve();
    });
    ws.ping();
  });
}

/**
 * What `listener` has heard (all of it) once `marker`, sent on `mic` after everything else, has come
 * through: `heardBefore` bytes and the marker's. Audio it should not have heard (a second copy, the other side's voice) comes before
 * the marker in the pipeline's order, so a test waits for the marker instead of for a time in which
 * nothing more arrives.
 */
export function heardThroughMarker(mic: WebSocket, listener: Listener, heardBefore: number, marker: Buffer): Promise<Buffer> {
  mic.send(marker);
  return listener.waitForBytes(heardBefore + marker.length);
}

export function connect(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk));
      res.on('end', () => reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(body || '{}') })));
    });
    ws.once('error', reject);
  });
}

export async function refusal(url: string): Promise<{ status: number; body: { detail?: string } }> {
  try {
    const ws = await connect(url);
    ws.close();
    throw new Error('expected a refusal, the upgrade succeeded');
  } catch (err) {
    const e = err as { status?: number; body?: { detail?: string } };
    if (e.status === undefined) throw err;
    return { status: e.status, body: e.body ?? {} };
  }
}

export const whenClosed = (ws: WebSocket): Promise<Closed> =>
  ws.readyState === WebSocket.CLOSED
    ? Promise.resolve({ code: -1, reason: 'already closed' })
    : new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));

/**
 * Runs `work` with Date.now() standing still for the in-process server (and the test). Rules that read
 * the wall clock, such as the mixer's "a source silent for 60 ms no longer holds the others back", then
 * cannot fire because a loaded machine delivered one socket's frame late; timers still run.
 */
export async function withServerClockStopped<T>(work: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
  try {
    return await work();
  } finally {
    vi.useRealTimers();
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What a socket client has received, waited on by event rather than by the clock: `find` is asked now
 * and each time something arrives; the wait fails as soon as the socket closes without it, and a test
 * that fails while it waits says what for (../support/waiting.ts).
 */
export class Arrivals extends EventEmitter {
  constructor(private readonly ws: WebSocket) {
    super();
    ws.on('message', () => this.emit('arrived'));
    ws.once('close', () => this.emit('arrived'));
  }

  waitFor<T>(find: () => T | undefined, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found !== undefined) resolve(found);
        else if (this.ws.readyState === WebSocket.CLOSED) reject(new Error(`the socket closed before ${what} arrived`));
        else return;
        stop();
        done();
      };
      const stop = () => this.off('arrived', check);
      const done = trackWait(() => what, stop);
      this.on('arrived', check);
      check();
    });
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Frame = Record<string, any>;

/** A listen socket client: collects WAV chunks and JSON frames, and how it closed. */
export class Listener {
  readonly chunks: Buffer[] = [];
  readonly frames: Frame[] = [];
  readonly closed: Promise<Closed>;
  private readonly arrivals: Arrivals;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) this.chunks.push(data as Buffer);
      else this.frames.push(JSON.parse(data.toString()));
    });
    this.arrivals = new Arrivals(ws);
    this.closed = whenClosed(ws);
  }

  static async open(url: string): Promise<Listener> {
    // Attach the message handler before the first frame (the greeting) can arrive.
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const listener = new Listener(ws);
      ws.once('open', () => resolve(listener));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode })));
      ws.once('error', reject);
    });
  }

  /** The samples of every chunk received, in order (headers checked). */
  pcm(): Buffer {
    return Buffer.concat(
      this.chunks.map((chunk) => {
        const info = parseWavHeader(chunk);
        if (!info || info.dataBytes !== chunk.length - WAV_HEADER_BYTES) throw new Error('malformed WAV chunk');
        return chunk.subarray(WAV_HEADER_BYTES);
      }),
    );
  }

  waitForFrame(match: (frame: Frame) => boolean): Promise<Frame> {
    return this.arrivals.waitFor(() => this.frames.find(match), 'a matching text frame');
  }

  waitForBytes(bytes: number): Promise<Buffer> {
    const received = () => this.chunks.reduce((n, c) => n + c.length - WAV_HEADER_BYTES, 0);
    return this.arrivals.waitFor(() => (received() >= bytes ? this.pcm() : undefined), `${bytes} bytes of audio`);
  }

  close(): void {
    this.ws.close();
  }
}

export interface SignalJoin extends Join {
  signal: { channel_id: string; path: string; token: string } | null;
  ice_servers: Array<{ urls: string | string[]; username?: string; credential?: string }>;
}

export const signalUrl = (t: Reachable, join: SignalJoin) => `${wsBase(t)}${join.signal!.path}?token=${encodeURIComponent(join.signal!.token)}`;

/** A signalling client: collects the text frames it receives (as sent, and parsed) and how it closed. */
export class Signal {
  readonly texts: string[] = [];
  readonly frames: Frame[] = [];
  readonly closed: Promise<Closed>;
  private readonly arrivals: Arrivals;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.texts.push(data.toString());
      this.frames.push(JSON.parse(data.toString()));
    });
    this.arrivals = new Arrivals(ws);
    this.closed = whenClosed(ws);
  }

  static open(url: string): Promise<Signal> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const signal = new Signal(ws);
      ws.once('open', () => resolve(signal));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode })));
      ws.once('error', reject);
    });
  }

  /** The first frame from the `after`-th on that matches. */
  next(match: (frame: Frame) => boolean, after = 0): Promise<Frame> {
    return this.arrivals.waitFor(() => this.frames.slice(after).find(match), 'a matching signalling frame');
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }
}

/** PCM16 LE samples that identify their source and position: value = base + index (wrapping). */
export function pattern(samples: number, base: number, offset = 0): Buffer {
  const out = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) out.writeInt16LE(((base + offset + i) % 65_536) - 32_768, i * 2);
  return out;
}

export function sine(samples: number, rate: number, hz: number, amplitude = 8_000): Buffer {
  const out = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) out.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)), i * 2);
  return out;
}

/** Sends `pcm` in frames of `frameBytes`, `intervalMs` apart (0: as fast as possible). */
export async function streamAudio(ws: WebSocket, pcm: Buffer, frameBytes = 960, intervalMs = 0): Promise<void> {
  for (let offset = 0; offset < pcm.length; offset += frameBytes) {
    ws.send(pcm.subarray(offset, offset + frameBytes));
    if (intervalMs) await sleep(intervalMs);
  }
}

// ---- AudioSocket -------------------------------------------------------------------------------

export interface PbxMessage {
  kind: number;
  payload: Buffer;
  at: number;
}

/** A scripted PBX: connects, reads messages, and can send UUID, audio, hangup. */
export class Pbx {
  readonly messages: PbxMessage[] = [];
  readonly ended: Promise<void>;
  private buffer = Buffer.alloc(0);

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (data) => {
      this.buffer = Buffer.concat([this.buffer, data]);
      while (this.buffer.length >= 3) {
        const length = this.buffer.readUInt16BE(1);
        if (this.buffer.length < 3 + length) break;
        this.messages.push({ kind: this.buffer[0], payload: Buffer.from(this.buffer.subarray(3, 3 + length)), at: performance.now() });
        this.buffer = this.buffer.subarray(3 + length);
      }
    });
    socket.on('error', () => {});
    this.ended = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static connect(port: number): Promise<Pbx> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(new Pbx(socket)));
      socket.once('error', reject);
    });
  }

  send(kind: number, payload: Buffer = Buffer.alloc(0)): void {
    const header = Buffer.alloc(3);
    header[0] = kind;
    header.writeUInt16BE(payload.length, 1);
    this.socket.write(Buffer.concat([header, payload]));
  }

  sendUuid(uuid: string): void {
    this.send(0x01, Buffer.from(uuid.replace(/-/g, ''), 'hex'));
  }

  audio(): PbxMessage[] {
    return this.messages.filter((m) => m.kind === 0x10);
  }

  close(): void {
    this.socket.destroy();
  }
}
