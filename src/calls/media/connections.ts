// The three kinds of media endpoint a room holds: stream sockets (a side's voice in), listen sockets
// (what a side hears, out) and phone lines (AudioSocket: both). Each leaves its room exactly once.
import { WebSocket } from 'ws';
import type { Side } from '../calls.js';
import { NOTICE, notice, type CloseCode, type TextFrame } from './protocol.js';

abstract class Endpoint {
  private gone = false;
  private onGone: (() => void) | null = null;

  get isGone(): boolean {
    return this.gone;
  }

  /** Called once when the endpoint leaves (closed by us, by the peer, or dropped). */
  whenGone(callback: () => void): void {
    this.onGone = callback;
  }

  /** Marks the endpoint gone and tells its room; safe to call more than once. */
  detach(): void {
    if (this.gone) return;
    this.gone = true;
    const callback = this.onGone;
    this.onGone = null;
    callback?.();
  }
}

abstract class SocketEndpoint extends Endpoint {
  /** Answered the last heartbeat ping. */
  alive = true;

  constructor(readonly ws: WebSocket) {
    super();
  }

  /** Leaves the room at once and closes the socket with `close` (after a notice, when given). */
  close(close: CloseCode, frame?: TextFrame): void {
    if (this.ws.readyState === WebSocket.OPEN) {
      if (frame) this.ws.send(JSON.stringify(frame));
      this.ws.close(close.code, close.reason);
    } else if (this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.terminate();
    }
    this.detach();
  }
}

/** A side's voice coming in: `/media/stream/{channel}`. */
export class StreamConn extends SocketEndpoint {
  framesReceived = 0;
  bytesReceived = 0;

  constructor(
    ws: WebSocket,
    readonly side: Side,
    readonly sourceId: string,
  ) {
    super(ws);
  }

  get sourceKey(): string {
    return `ws:${this.sourceId}`;
  }
}

/** What a side hears going out: `/media/listen/{channel}`; `side` is the side that hears. */
export class ListenConn extends SocketEndpoint {
  chunksSent = 0;
  chunksDropped = 0;
  private slowNoticeSent = false;

  constructor(
    ws: WebSocket,
    readonly side: Side,
    private readonly bufferCapBytes: () => number,
  ) {
    super(ws);
  }

  /** Sends one WAV chunk, or drops it when the peer is not keeping up (bounded memory per listener). */
  sendAudio(chunk: Buffer): void {
    if (this.isGone || this.ws.readyState !== WebSocket.OPEN) return;
    if (this.ws.bufferedAmount > this.bufferCapBytes()) {
      this.chunksDropped++;
      if (!this.slowNoticeSent) {
        this.slowNoticeSent = true;
        this.ws.send(JSON.stringify(notice(NOTICE.listenerSlow)));
      }
      return;
    }
    this.chunksSent++;
    this.ws.send(chunk, { binary: true });
  }

  sendJson(frame: TextFrame): void {
    if (this.isGone || this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify(frame));
  }
}

/** What the AudioSocket server gives the media plane for one connected PBX line. */
export interface LineEndpoint {
  readonly lineId: string;
  /** Audio the line's side should hear (24 kHz PCM16); the line resamples and paces it. */
  play(pcm24k: Buffer): void;
  /** Ends the line: hangup to the PBX, then the connection closes. */
  hangup(reason: string): void;
}

/** A phone line playing one side: its voice in, and what that side hears out. */
export class LineConn extends Endpoint {
  constructor(
    readonly side: Side,
    readonly endpoint: LineEndpoint,
  ) {
    super();
  }

  get sourceKey(): string {
    return `line:${this.endpoint.lineId}`;
  }

  hangup(reason: string): void {
    if (this.isGone) return;
    this.detach();
    this.endpoint.hangup(reason);
  }
}
