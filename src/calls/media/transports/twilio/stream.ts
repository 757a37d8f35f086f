// One Twilio media stream as a phone line (../phone/line.ts): 8 kHz mu-law in JSON messages over a
// WebSocket (./protocol.ts). Beyond the shared skeleton, marks after each stretch of audio tell how far
// the phone has played, and audio the phone still holds is cleared when it is stale, so the phone never
// lags behind the conversation; a phone that leaves by itself leaves the call (the side is no longer
// present).
import { WebSocket } from 'ws';
import type { CallRow } from '../../../calls.js';
import type { Side } from '../../../side.js';
import type { Refused } from '../../admission.js';
import { MULAW_SILENCE, mulawToPcm16, pcm16ToMulaw } from '../../audio/mulaw.js';
import type { EndReason } from '../../endpoints.js';
import { PhoneLine, type AdmittedLine, type LineEnding, type LineHost, type PhoneCodec } from '../phone/line.js';
import { CLOSE, FRAME_BYTES, clearMessage, markMessage, mediaMessage, parseMessage } from './protocol.js';

const MULAW: PhoneCodec = { frameBytes: FRAME_BYTES, silence: MULAW_SILENCE, encode: pcm16ToMulaw, decode: mulawToPcm16 };

/** A mark after this many frames of continuous audio (and whenever the audio pauses). */
const MARK_EVERY_FRAMES = 25;
/** Audio sent but not yet played beyond this is stale: the phone is told to drop it. */
const MAX_UNPLAYED_FRAMES = 100;

const CLOSINGS: Record<EndReason, { code: number; reason: string }> = {
  call_ended: CLOSE.callEnded,
  source_replaced: CLOSE.replaced,
  shutting_down: CLOSE.shuttingDown,
  link_replaced: CLOSE.badToken,
  line_replaced: CLOSE.replaced,
  left: CLOSE.callEnded,
  reconnect: CLOSE.replaced,
};

/** What the transport does for a stream: admission by the `start` message's token, and a phone that left. */
export interface StreamProvider {
  admit(stream: TwilioStream, token: string | null): Promise<AdmittedLine | Refused>;
  left(stream: TwilioStream): void;
}

export class TwilioStream extends PhoneLine {
  protected readonly kind = 'twilio';
  private streamSid = '';
  private framesSinceMark = 0;
  private markSeq = 0;
  /** Frames the phone has played by its last echoed mark. */
  private framesPlayed = 0;
  /** Frames sent at each mark still unanswered, by mark name. */
  private readonly marks = new Map<string, number>();
  private clears = 0;

  constructor(
    readonly ws: WebSocket,
    readonly call: CallRow,
    readonly side: Side,
    /** The client address: a wrong token counts against it (guessing). */
    readonly address: string,
    host: LineHost,
    private readonly provider: StreamProvider,
  ) {
    super(MULAW, host);
    ws.on('message', (data, isBinary) => this.receive(data as Buffer, isBinary));
    ws.on('error', (err) => host.log.debug({ err }, 'twilio: stream socket error'));
    ws.once('close', () => this.connectionClosed());
  }

  protected logFields() {
    return { call_id: this.call.id, side: this.side };
  }

  private receive(data: Buffer, isBinary: boolean): void {
    if (this.isClosed) return;
    this.heardFrom();
    const message = isBinary ? null : parseMessage(data.toString('utf8'));
    if (!message) return this.end({ by: 'bad_message', detail: 'not a Twilio Media Streams message' });
    switch (message.event) {
      case 'start':
        if (!this.awaitingFirstMessage) return this.end({ by: 'bad_message', detail: 'a second start' });
        this.streamSid = message.streamSid;
        void this.join(() => this.provider.admit(this, message.token));
        return;
      case 'media':
        if (message.inbound) this.hear(message.payload);
        return;
      case 'mark':
        return this.played(message.name);
      case 'stop':
        this.host.log.debug(this.logFields(), 'twilio: the phone hung up');
        return this.end({ by: 'hung_up' });
      case 'connected':
      case 'dtmf':
        // Digits are not logged: callers type PINs and card numbers.
        return;
    }
  }

  protected get unsentBytes(): number {
    return this.ws.bufferedAmount;
  }

  protected sendFrame(frame: Buffer): void {
    this.ws.send(mediaMessage(this.streamSid, frame));
  }

  protected override frameSent(): void {
    if (++this.framesSinceMark >= MARK_EVERY_FRAMES) this.mark();
  }

  protected override caughtUp(): void {
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

  /** What the phone still holds is in the old language. */
  override otherLanguageChanged(): void {
    this.clearStale();
  }

  /** The other side's next turn: if the phone is still behind on the last one, it skips the rest. */
  override turnStarted(): void {
    if (this.isBehind) this.clearStale();
  }

  /** Audio queued here and held by Twilio is stale: drop both. */
  private clearStale(): void {
    if (!this.isActive) return;
    this.dropQueued();
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

  override counters(): Record<string, number> {
    return { ...super.counters(), clears: this.clears };
  }

  protected override left(): void {
    this.provider.left(this);
  }

  /** The socket closes with the code that says why (the connection closed already: nothing to say). */
  protected hangUp(ending: LineEnding): void {
    if (ending.by === 'closed') return;
    const closing = closingFor(ending);
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(closing.code, closing.reason);
    else this.ws.terminate();
  }

  destroy(): void {
    this.ws.terminate();
  }
}

function closingFor(ending: Exclude<LineEnding, { by: 'closed' }>): { code: number; reason: string } {
  switch (ending.by) {
    case 'server':
      return CLOSINGS[ending.reason];
    case 'silence':
      return CLOSE.idle;
    case 'no_first_message':
      return CLOSE.noStart;
    case 'bad_message':
      return CLOSE.badMessage;
    case 'refused':
      return CLOSE.badToken;
    case 'internal_error':
      return CLOSE.internal;
    case 'hung_up':
      return CLOSE.stopped;
  }
}
