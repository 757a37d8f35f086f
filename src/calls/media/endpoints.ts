// What a transport hands a room: endpoints. A transport (browser WebSockets, an AudioSocket phone line,
// later a Twilio media stream or a bridge to another instance) turns its connection into a side's audio
// in (a source), what a side hears (a sink), or both; the room only ever sees these interfaces.
import type { Side } from '../side.js';
import type { TextFrame } from './protocol.js';

/**
 * Why the room ends an endpoint. Each transport says it in its own words (a WebSocket close code and
 * notice, an AudioSocket hangup, ...).
 */
export type EndReason =
  | 'call_ended'
  | 'link_replaced'
  | 'left'
  | 'line_replaced'
  | 'reconnect'
  | 'source_replaced'
  | 'shutting_down';

/**
 * What admitted the endpoint, so that replacing it ends it: the side's link (its key, behind the
 * stream token and listen unlock), the side's phone line id, or a dialled phone's single-use stream
 * token (replaced by dialling again, which hangs the old phone up).
 */
export type Credential = 'link' | 'line' | 'phone';

export interface EndpointBase {
  /** The side whose voice a source carries, or that hears through a sink. */
  readonly side: Side;
  readonly credential: Credential;
  /** For diagnostics and stats: `stream`, `listen`, `line`, ... */
  readonly kind: string;
  readonly isGone: boolean;
  /** Calls `callback` once when the endpoint is gone, whoever ended it (each callback given). */
  whenGone(callback: () => void): void;
  /** The room ends the endpoint: it leaves the room at once and its connection closes as `reason` says. */
  end(reason: EndReason): void;
}

/** A side's voice coming in (mono PCM16 LE 24 kHz); the room is told each piece with room.audio(). */
export interface MediaSource extends EndpointBase {
  /** Unique per side: a newer source with the same key replaces the older one. */
  readonly sourceKey: string;
}

/** What a side hears going out. */
export interface MediaSink extends EndpointBase {
  /** `wav`: complete 24 kHz WAV chunks and JSON text frames; `pcm`: raw 24 kHz PCM16, no text. */
  readonly format: 'wav' | 'pcm';
  /** A WAV chunk (format `wav`) or raw PCM (format `pcm`); never blocks (drop or buffer inside). */
  audio(data: Buffer): void;
  /** Captions, provenance and notices (format `wav` sinks). */
  text?(frame: TextFrame): void;
  /** The other side changed its language: what this sink queued is stale (reconnect, clear a buffer). */
  otherLanguageChanged?(): void;
  /**
   * A new turn of what this sink hears begins (its audio follows): audio of earlier turns still
   * queued is stale, and a sink that would otherwise lag behind the conversation drops it.
   */
  turnStarted?(): void;
  /** Unsent bytes held for this sink (stats). */
  readonly bufferedBytes?: number;
  readonly chunksSent?: number;
  readonly chunksDropped?: number;
}

/** A phone line and the like: one connection that is both a side's voice and what that side hears. */
export type MediaDuplex = MediaSource & MediaSink;

/**
 * Neither voice nor hearing: a connection that belongs to a side's presence in the call (the call
 * page's WebRTC signalling). The room ends it with the side's other endpoints (and tells a signalling
 * peer the side's own captions).
 */
export type SideCompanion = EndpointBase;

/**
 * A side's signalling connection: a companion that carries the call page's WebRTC negotiation. All of a
 * call's signalling peers meet where its room is (./signalling.ts), whichever instance they reached.
 */
export interface SignalPeer extends SideCompanion {
  readonly callId: string;
  /**
   * A frame for the connection (JSON text: the other side's in its envelope, presence, the side's own
   * captions, fresh ICE servers); never blocks (a stuck peer's are dropped).
   */
  signal(text: string): void;
}

/** Whatever a transport brings into a room. */
export type CallEndpoint = MediaSource | MediaSink | SideCompanion;

export const isSource = (endpoint: CallEndpoint): endpoint is MediaSource => 'sourceKey' in endpoint;
export const isSink = (endpoint: CallEndpoint): endpoint is MediaSink => 'format' in endpoint;
export const isSignalPeer = (endpoint: CallEndpoint): endpoint is SignalPeer => 'signal' in endpoint;

/**
 * Shared bookkeeping of an endpoint: gone once, its room told once. Transports extend it and implement
 * `close(reason)` (what ending means on their wire).
 */
export abstract class EndpointState {
  private gone = false;
  /** Its room, and (relayed to another instance) the bridge. */
  private onGone: Array<() => void> = [];

  get isGone(): boolean {
    return this.gone;
  }

  whenGone(callback: () => void): void {
    this.onGone.push(callback);
  }

  /** Marks the endpoint gone and tells its room; safe to call more than once. */
  detach(): void {
    if (this.gone) return;
    this.gone = true;
    const callbacks = this.onGone;
    this.onGone = [];
    for (const callback of callbacks) callback();
  }

  end(reason: EndReason): void {
    if (this.gone) return;
    this.detach();
    this.close(reason);
  }

  /** Closes the connection as `reason` says; the endpoint has already left its room. */
  protected abstract close(reason: EndReason): void;
}
