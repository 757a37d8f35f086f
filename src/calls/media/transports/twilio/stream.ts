// One Twilio media stream: a phone playing one side of a call. Its mu-law voice is decoded and resampled
// to 24 kHz into the side's mix; what the side hears is resampled to 8 kHz, mu-law encoded and sent one
// 20 ms frame per 20 ms. Marks after each stretch of audio tell how far the phone has played; audio the
// phone still holds is cleared when it is stale, so the phone never lags behind the conversation.
// Protocol: ./protocol.ts.
import type { Logger } from 'pino';
import { WebSocket } from 'ws';
import type { CallRow } from '../../../calls.js';
import type { Side } from '../../../side.js';
import { Downsampler24kTo8k, Upsampler8kTo24k } from '../../audio/pcm.js';
import { MULAW_SILENCE, mulawToPcm16, pcm16ToMulaw } from '../../audio/mulaw.js';
import { PacedFrames } from '../../audio/pacedFrames.js';
import { EndpointState, type Credential, type EndReason, type MediaDuplex } from '../../endpoints.js';
import type { AudioFeed } from '../../room/room.js';
import {
  CLOSE,
  FRAME_BYTES,
  FRAME_MS,
  clearMessage,
  markMessage,
  mediaMessage,
  parseMessage,
  type StartMessage,
} from './protocol.js';

/** What may wait to be sent: 5 s of 8 kHz mu-law (interpreters answer in bursts); older audio is dropped. */
const MAX_QUEUED_BYTES = 5 * 8_000;
/** A mark after this many frames of continuous audio (and whenever the audio pauses). */
const MARK_EVERY_FRAMES = 25;
/** Audio sent but not yet played beyond this is stale: the phone is told to drop it. */
const MAX_UNPLAYED_FRAMES = 100;
/** A partial last frame is padded with silence once no more audio came for this long. */
const TAIL_WAIT_MS = 2 * FRAME_MS;
/** Unsent bytes in the socket beyond which frames are dropped (Twilio is not reading). */
const MAX_SOCKET_BACKLOG_BYTES = 64 * 1024;

const CLOSINGS: Record<EndReason, { code: number; reason: string }> = {
  call_ended: CLOSE.callEnded,
  source_replaced: CLOSE.replaced,
  shutting_down: CLOSE.shuttingDown,
  link_replaced: CLOSE.badToken,
  line_replaced: CLOSE.replaced,
  left: CLOSE.callEnded,
  reconnect: CLOSE.replaced,
};

/** The stream as its room sees it: the side's voice in, what the side hears out. */
class PhoneStream extends EndpointState implements MediaDuplex {
  readonly kind = 'twilio';
  readonly format = 'pcm' as const;
  readonly sourceKey: string;

  constructor(
    readonly side: Side,
    readonly credential: Credential,
    private readonly connection: TwilioStreamConnection,
  ) {
    super();
    this.sourceKey = `twilio:${side}`;
  }

  audio(pcm24k: Buffer): void {
    this.connection.play(pcm24k);
  }

  /** The other side speaks another language now: what the phone still holds is in the old one. */
  otherLanguageChanged(): void {
    this.connection.clearStale();
  }

  /** The other side's next turn: if the phone is still behind on the last one, it skips the rest. */
  turnStarted(): void {
    if (this.connection.isBehind) this.connection.clearStale();
  }

  protected close(reason: EndReason): void {
    this.connection.close(CLOSINGS[reason]);
  }
}

export interface StreamHost {
  readonly log: Logger;
  readonly startTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** Checks the start message's token; on success puts the stream into its call's room. */
  start(connection: TwilioStreamConnection, start: StartMessage): Promise<{ credential: Credential; enter(stream: MediaDuplex): AudioFeed } | null>;
  /** The phone left (stop, or the socket closed after a start): the side is no longer present. */
  left(connection: TwilioStreamConnection): void;
  closed(connection: TwilioStreamConnection): void;
}

export class TwilioStreamConnection {
  private state: 'awaiting_start' | 'validating' | 'active' | 'closed' = 'awaiting_start';
  private streamSid = '';
  private endpoint: PhoneStream | null = null;
  private feed: AudioFeed | null = null;
  private readonly upsampler = new Upsampler8kTo24k();
  private readonly downsampler = new Downsampler24kTo8k();
  private readonly paced = new PacedFrames({
    frameBytes: FRAME_BYTES,
    frameMs: FRAME_MS,
    maxQueuedBytes: MAX_QUEUED_BYTES,
    tailWaitMs: TAIL_WAIT_MS,
    silence: MULAW_SILENCE,
  });
  private framesSinceMark = 0;
  private markSeq = 0;
  /** Frames sent, and frames the phone has played by its last echoed mark. */
  framesSent = 0;
  private framesPlayed = 0;
  /** Frames sent at each mark still unanswered, by mark name. */
  private readonly marks = new Map<string, number>();
  /** Frames dropped: beyond the queue limit, or while the socket was backed up. */
  get framesDropped(): number {
    return this.paced.framesDropped;
  }
  clears = 0;
  private readonly startTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly ws: WebSocket,
    readonly call: CallRow,
    readonly side: Side,
    /** The client address: a wrong token counts against it (guessing). */
    readonly address: string,
    private readonly host: StreamHost,
  ) {
    ws.on('message', (data, isBinary) => this.receive(data as Buffer, isBinary));
    ws.on('error', (err) => host.log.debug({ err }, 'twilio: stream socket error'));
    ws.once('close', () => this.closed());
    this.startTimer = setTimeout(() => {
      if (this.state === 'awaiting_start') this.close(CLOSE.noStart);
    }, host.startTimeoutMs);
    this.startTimer.unref();
  }

  get isActive(): boolean {
    return this.state === 'active';
  }

  /** Audio of at least one whole frame is still waiting to be sent: the phone is behind what it hears. */
  get isBehind(): boolean {
    return this.paced.queuedBytes >= FRAME_BYTES;
  }

  private receive(data: Buffer, isBinary: boolean): void {
    if (this.state === 'closed') return;
    this.idleTimer?.refresh();
    const message = isBinary ? null : parseMessage(data.toString('utf8'));
    if (!message) return this.close(CLOSE.badMessage);
    switch (message.event) {
      case 'start':
        if (this.state !== 'awaiting_start') return this.close(CLOSE.badMessage);
        clearTimeout(this.startTimer);
        this.state = 'validating';
        this.streamSid = message.streamSid;
        void this.begin(message);
        return;
      case 'media':
        // Audio that arrives while the token is checked is dropped (a few milliseconds).
        if (this.state === 'active' && message.inbound && message.payload.length) this.feed!(this.upsampler.process(mulawToPcm16(message.payload)));
        return;
      case 'mark':
        return this.played(message.name);
      case 'stop':
        this.host.log.debug({ call_id: this.call.id, side: this.side }, 'twilio: the phone hung up');
        return this.close({ code: 1000, reason: 'stream stopped' });
      case 'connected':
      case 'dtmf':
        // Digits are not logged: callers type PINs and card numbers.
        return;
    }
  }

  private async begin(start: StartMessage): Promise<void> {
    try {
      const admitted = await this.host.start(this, start);
      if (this.state !== 'validating') return;
      if (!admitted) return this.close(CLOSE.badToken);
      const endpoint = new PhoneStream(this.side, admitted.credential, this);
      this.endpoint = endpoint;
      this.state = 'active';
      this.feed = admitted.enter(endpoint);
      this.idleTimer = setTimeout(() => this.close({ code: 1001, reason: 'no message in time' }), this.host.idleTimeoutMs);
      this.idleTimer.unref();
      this.host.log.info({ call_id: this.call.id, side: this.side, credential: admitted.credential }, 'twilio: phone stream joined');
    } catch (err) {
      this.host.log.error({ err }, 'twilio: could not open the stream');
      this.close(CLOSE.internal);
    }
  }

  /** What the side hears (24 kHz), queued as 8 kHz mu-law for pacing. */
  play(pcm24k: Buffer): void {
    if (this.state !== 'active') return;
    this.paced.push(pcm16ToMulaw(this.downsampler.process(pcm24k)), Date.now());
  }

  /** Sends what is due: one 160-byte frame per 20 ms of wall time; a mark after each stretch. */
  pump(now: number): void {
    if (this.state !== 'active') return;
    this.paced.due(now, (frame) => {
      if (this.ws.bufferedAmount > MAX_SOCKET_BACKLOG_BYTES) return false;
      this.ws.send(mediaMessage(this.streamSid, frame));
      this.framesSent++;
      if (++this.framesSinceMark >= MARK_EVERY_FRAMES) this.mark();
      return true;
    });
    if (!this.paced.queuedBytes) this.markIfPending();
  }

  private markIfPending(): void {
    if (this.framesSinceMark) this.mark();
  }

  private mark(): void {
    const name = String(++this.markSeq);
    this.marks.set(name, this.framesSent);
    this.framesSinceMark = 0;
    this.ws.send(markMessage(this.streamSid, name));
  }

  /** Twilio played up to a mark. If it still holds too much, what it holds is stale: clear it. */
  private played(name: string): void {
    const upTo = this.marks.get(name);
    if (upTo === undefined) return;
    for (const [pending, frames] of this.marks) {
      this.marks.delete(pending);
      if (frames >= upTo) break;
    }
    this.framesPlayed = Math.max(this.framesPlayed, upTo);
    if (this.framesSent - this.framesPlayed > MAX_UNPLAYED_FRAMES) this.clear();
  }

  /** Audio queued here and held by Twilio is stale (a new language): drop both. */
  clearStale(): void {
    if (this.state !== 'active') return;
    this.paced.clear();
    this.clear();
  }

  private clear(): void {
    this.ws.send(clearMessage(this.streamSid));
    this.clears++;
    // Twilio answers the marks it dropped when clearing; nothing before them is outstanding now.
    this.marks.clear();
    this.framesPlayed = this.framesSent;
    this.framesSinceMark = 0;
  }

  /** Ends the stream: the socket closes with `closing`; the phone leaves the room. */
  close(closing: { code: number; reason: string }): void {
    if (this.state === 'closed') return;
    // The phone left by itself (stop, hang-up, silence), not ended by its room (call ended, replaced by
    // a newer stream of the side, shutdown): only then is the side no longer present.
    const leftByItself = this.state === 'active' && !this.endpoint!.isGone;
    this.state = 'closed';
    clearTimeout(this.startTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.endpoint?.detach();
    if (leftByItself) this.host.left(this);
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(closing.code, closing.reason);
    else this.ws.terminate();
  }

  private closed(): void {
    if (this.state !== 'closed') this.close({ code: 1000, reason: 'closed' });
    this.host.closed(this);
  }
}
