// The browser's (or a machine client's) media sockets as room endpoints: a stream socket is a side's
// voice coming in; a listen socket is what a side hears, as WAV chunks and JSON text frames; a
// signalling socket carries the call page's WebRTC negotiation (../../signalling.ts relays it).
import { WebSocket } from 'ws';
import type { Side } from '../../../side.js';
import { EndpointState, type EndReason, type MediaSink, type MediaSource, type SignalPeer } from '../../endpoints.js';
import { CLOSE, NOTICE, notice, SIGNAL_BUFFER_CAP_BYTES, type CloseCode, type NoticeCode, type TextFrame } from '../../protocol.js';

/** How each reason to end a socket is said: a close code, and for listeners a notice first. */
const ENDINGS: Record<EndReason, { close: CloseCode; notice: NoticeCode | null }> = {
  call_ended: { close: CLOSE.callEnded, notice: NOTICE.callEnded },
  link_replaced: { close: CLOSE.linkReplaced, notice: NOTICE.linkReplaced },
  left: { close: CLOSE.left, notice: NOTICE.left },
  reconnect: { close: CLOSE.reconnect, notice: NOTICE.reconnect },
  source_replaced: { close: CLOSE.sourceReplaced, notice: null },
  shutting_down: { close: CLOSE.shuttingDown, notice: null },
  // Sockets are admitted by the link, never by a phone line; listed for completeness.
  line_replaced: { close: CLOSE.linkReplaced, notice: NOTICE.linkReplaced },
};

abstract class SocketEndpoint extends EndpointState {
  readonly credential = 'link' as const;
  /** Answered the last heartbeat ping. */
  alive = true;

  constructor(
    readonly ws: WebSocket,
    readonly side: Side,
  ) {
    super();
  }

  /** Leaves the room at once and closes the socket with `close` (after a notice, when given). */
  closeWith(close: CloseCode, frame?: TextFrame): void {
    this.detach();
    if (this.ws.readyState === WebSocket.OPEN) {
      if (frame) this.ws.send(JSON.stringify(frame));
      this.ws.close(close.code, close.reason);
    } else if (this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.terminate();
    }
  }
}

/** A side's voice: `/media/stream/{channel}`. */
export class StreamSocket extends SocketEndpoint implements MediaSource {
  readonly kind = 'stream';
  readonly sourceKey: string;

  constructor(ws: WebSocket, side: Side, sourceId: string) {
    super(ws, side);
    this.sourceKey = `ws:${sourceId}`;
  }

  protected close(reason: EndReason): void {
    this.closeWith(ENDINGS[reason].close);
  }
}

/** What a side hears: `/media/listen/{channel}`. */
export class ListenSocket extends SocketEndpoint implements MediaSink {
  readonly kind = 'listen';
  readonly format = 'wav' as const;
  chunksSent = 0;
  chunksDropped = 0;
  private slowNoticeSent = false;

  constructor(
    ws: WebSocket,
    side: Side,
    /** Unsent bytes beyond which chunks are dropped: memory per listener stays bounded. */
    private readonly bufferCapBytes: number,
  ) {
    super(ws, side);
  }

  get bufferedBytes(): number {
    return this.ws.bufferedAmount;
  }

  /** Sends one WAV chunk, or drops it while the peer is not keeping up (told once). */
  audio(chunk: Buffer): void {
    if (this.isGone || this.ws.readyState !== WebSocket.OPEN) return;
    if (this.ws.bufferedAmount > this.bufferCapBytes) {
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

  text(frame: TextFrame): void {
    if (this.isGone || this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify(frame));
  }

  /** The other side now speaks another language: this listener reconnects to hear it. */
  otherLanguageChanged(): void {
    this.end('reconnect');
  }

  protected close(reason: EndReason): void {
    const ending = ENDINGS[reason];
    this.closeWith(ending.close, ending.notice ? notice(ending.notice) : undefined);
  }
}

/** A side's WebRTC signalling: `/media/signal/{channel}`. Ended with the side's media, never heard. */
export class SignalSocket extends SocketEndpoint implements SignalPeer {
  readonly kind = 'signal';

  constructor(
    ws: WebSocket,
    side: Side,
    readonly callId: string,
  ) {
    super(ws, side);
  }

  /** Sends a text frame unless the peer stopped reading (beyond SIGNAL_BUFFER_CAP_BYTES unsent: dropped). */
  signal(text: string): void {
    if (this.isGone || this.ws.readyState !== WebSocket.OPEN || this.ws.bufferedAmount > SIGNAL_BUFFER_CAP_BYTES) return;
    this.ws.send(text);
  }

  protected close(reason: EndReason): void {
    this.closeWith(ENDINGS[reason].close);
  }
}
