// One phone connection playing one side of a call, whatever the provider (the way pipecat's telephony
// transports share one base and differ by their serializer). The skeleton is the same for all: the
// first message names the line and admission decides; an admitted line joins its side of the call's
// room; the side's 8 kHz voice is decoded and resampled to 24 kHz into the room; what the side hears is
// resampled to 8 kHz, encoded and paced out one 20 ms frame per 20 ms, frames the connection cannot
// take counted as dropped; a line silent for the idle timeout is hung up. A provider (../audiosocket,
// ../twilio) brings its codec, parses its own messages and says each ending in its own words.
import type { Logger } from 'pino';
import type { CallRow } from '../../../calls.js';
import type { Side } from '../../../side.js';
import type { Refused } from '../../admission.js';
import { PacedFrames } from '../../audio/pacedFrames.js';
import { Downsampler24kTo8k, Upsampler8kTo24k } from '../../audio/pcm.js';
import { EndpointState, type Credential, type EndReason, type MediaDuplex } from '../../endpoints.js';
import type { MediaPlane, Recheck } from '../../plane.js';
import type { AudioFeed } from '../../room/room.js';

/** 8 kHz mono audio as one provider carries it. */
export interface PhoneCodec {
  /** One 20 ms frame on the wire. */
  readonly frameBytes: number;
  /** The byte a partial last frame is padded with. */
  readonly silence: number;
  /** 8 kHz PCM16 LE to the wire's encoding, and back. */
  encode(pcm8k: Buffer): Buffer;
  decode(wire: Buffer): Buffer;
}

export const FRAME_MS = 20;
/** What may wait to be sent: 5 s of audio (interpreters answer in bursts); older audio is dropped. */
const MAX_QUEUED_MS = 5_000;
/** A partial last frame is padded with silence once no more audio came for this long. */
const TAIL_WAIT_MS = 2 * FRAME_MS;
/** Unsent bytes in the connection beyond which frames are dropped (the provider is not reading). */
const MAX_UNSENT_BYTES = 64 * 1024;

/** Why a line ends. Each provider says it in its own words (a frame before closing, a close code). */
export type LineEnding =
  /** The server ended it: its room (the call ended, a newer line of the side, ...) or shutdown. */
  | { by: 'server'; reason: EndReason }
  /** Joined, it sent nothing for the idle timeout: the provider is gone without saying so. */
  | { by: 'silence' }
  /** The message that names the line did not come in time. */
  | { by: 'no_first_message' }
  /** A message the provider's protocol does not allow here (`detail` is for the log). */
  | { by: 'bad_message'; detail: string }
  | { by: 'refused'; refusal: Refused }
  /** Joining failed on the server's side. */
  | { by: 'internal_error' }
  /** The provider hung up (or reported an error of its own). */
  | { by: 'hung_up' }
  /** The connection closed under the line. */
  | { by: 'closed' };

/** What admission found: the call and side the line plays, and how it stays valid. */
export interface AdmittedLine {
  call: CallRow;
  side: Side;
  credential: Credential;
  /** Unique among the side's sources: a newer line with the same key replaces the older one. */
  sourceKey: string;
  /** Re-reads the call once the line is in its room (a newer line or the end may have come meanwhile). */
  recheck: Recheck;
}

/** What the lines of one transport share (./lines.ts). */
export interface LineHost {
  /** The transport's name: what its log lines start with. */
  readonly name: string;
  readonly plane: MediaPlane;
  readonly log: Logger;
  /** The message that names the line must come within this. */
  readonly firstMessageTimeoutMs: number;
  /** A joined line that sends nothing for this long is hung up (providers send audio every 20 ms). */
  readonly idleTimeoutMs: number;
  closed(line: PhoneLine): void;
}

/** The line as its room sees it: the side's voice in, what the side hears out. */
class LineEndpoint extends EndpointState implements MediaDuplex {
  readonly format = 'pcm' as const;

  constructor(
    readonly side: Side,
    readonly credential: Credential,
    readonly kind: string,
    readonly sourceKey: string,
    private readonly line: PhoneLine,
  ) {
    super();
  }

  audio(pcm24k: Buffer): void {
    this.line.play(pcm24k);
  }

  otherLanguageChanged(): void {
    this.line.otherLanguageChanged();
  }

  turnStarted(): void {
    this.line.turnStarted();
  }

  protected close(reason: EndReason): void {
    this.line.end({ by: 'server', reason });
  }
}

export abstract class PhoneLine {
  /** `awaiting` the message that names the line, `validating` it, `active` in its room, then `closed`. */
  private state: 'awaiting' | 'validating' | 'active' | 'closed' = 'awaiting';
  private endpoint: LineEndpoint | null = null;
  private feed: AudioFeed | null = null;
  private readonly upsampler = new Upsampler8kTo24k();
  private readonly downsampler = new Downsampler24kTo8k();
  private readonly paced: PacedFrames;
  private readonly firstMessageTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | null = null;
  framesSent = 0;
  /** The endpoint's kind in its room (`line`, `twilio`, ...). */
  protected abstract readonly kind: string;

  constructor(
    private readonly codec: PhoneCodec,
    protected readonly host: LineHost,
  ) {
    this.paced = new PacedFrames({
      frameBytes: codec.frameBytes,
      frameMs: FRAME_MS,
      maxQueuedBytes: (codec.frameBytes * MAX_QUEUED_MS) / FRAME_MS,
      tailWaitMs: TAIL_WAIT_MS,
      silence: codec.silence,
    });
    this.firstMessageTimer = setTimeout(() => {
      if (this.state === 'awaiting') this.end({ by: 'no_first_message' });
    }, host.firstMessageTimeoutMs);
    this.firstMessageTimer.unref();
  }

  // ---- what the provider implements ------------------------------------------------------------

  /** Bytes written to the connection and not sent yet. */
  protected abstract get unsentBytes(): number;
  /** Writes one frame of what the side hears (already in the wire's encoding). */
  protected abstract sendFrame(frame: Buffer): void;
  /** Says `ending` on the wire and closes the connection (the line has already left its room). */
  protected abstract hangUp(ending: LineEnding): void;
  /** Drops the connection at once (shutdown, after the grace). */
  abstract destroy(): void;
  /** Fields that name the line in logs (never a secret). */
  protected abstract logFields(): Record<string, unknown>;

  /** The provider left by itself while in the room (not ended by the server): the side may no longer be present. */
  protected left(): void {}
  /** A frame went out (counted already). */
  protected frameSent(): void {}
  /** Everything queued has been sent. */
  protected caughtUp(): void {}
  /** The other side speaks another language now: audio the provider still holds is stale. */
  otherLanguageChanged(): void {}
  /** The other side's next turn begins. */
  turnStarted(): void {}

  // ---- what the provider calls -------------------------------------------------------------------

  get isActive(): boolean {
    return this.state === 'active';
  }

  protected get isClosed(): boolean {
    return this.state === 'closed';
  }

  protected get awaitingFirstMessage(): boolean {
    return this.state === 'awaiting';
  }

  /** Audio of at least one whole frame still waits to be sent: the phone is behind what it hears. */
  protected get isBehind(): boolean {
    return this.paced.queuedBytes >= this.codec.frameBytes;
  }

  /** Forgets the audio still queued here (it is stale). */
  protected dropQueued(): void {
    this.paced.clear();
  }

  /** Anything from the provider: the line is not idle. */
  protected heardFrom(): void {
    this.idleTimer?.refresh();
  }

  /** The first message named the line: admission decides; an admitted line joins its side of the call. */
  protected async join(admit: () => Promise<AdmittedLine | Refused>): Promise<void> {
    clearTimeout(this.firstMessageTimer);
    this.state = 'validating';
    try {
      const admitted = await admit();
      // The provider went away while the line was being checked.
      if (this.state !== 'validating') return;
      if ('refused' in admitted) return this.end({ by: 'refused', refusal: admitted });
      const { call, side, credential, sourceKey, recheck } = admitted;
      const endpoint = new LineEndpoint(side, credential, this.kind, sourceKey, this);
      this.endpoint = endpoint;
      this.state = 'active';
      this.feed = this.host.plane.enter(call, endpoint, recheck).audio;
      this.idleTimer = setTimeout(() => this.end({ by: 'silence' }), this.host.idleTimeoutMs);
      this.idleTimer.unref();
      this.host.log.info({ ...this.logFields(), call_id: call.id, side, credential }, `${this.host.name}: line joined`);
    } catch (err) {
      this.host.log.error({ err, ...this.logFields() }, `${this.host.name}: could not open the line`);
      this.end({ by: 'internal_error' });
    }
  }

  /** The side's voice in the wire's encoding: into the room at 24 kHz (dropped while admission runs). */
  protected hear(wire: Buffer): void {
    if (this.state === 'active' && this.feed && wire.length) this.feed(this.upsampler.process(this.codec.decode(wire)));
  }

  /** The connection closed: the line ends, and its transport forgets it. */
  protected connectionClosed(): void {
    this.end({ by: 'closed' });
    this.host.closed(this);
  }

  // ---- the skeleton ------------------------------------------------------------------------------

  /** What the side hears (24 kHz), queued in the wire's encoding for pacing. */
  play(pcm24k: Buffer): void {
    if (this.state !== 'active') return;
    this.paced.push(this.codec.encode(this.downsampler.process(pcm24k)), Date.now());
  }

  /** Sends what is due: one frame per 20 ms of wall time, never an empty frame, never a burst. */
  pump(now: number): void {
    if (this.state !== 'active') return;
    this.paced.due(now, (frame) => {
      if (this.unsentBytes > MAX_UNSENT_BYTES) return false;
      this.sendFrame(frame);
      this.framesSent++;
      this.frameSent();
      return true;
    });
    if (!this.paced.queuedBytes) this.caughtUp();
  }

  /** Frames dropped: beyond the queue limit, or while the connection was backed up. */
  get framesDropped(): number {
    return this.paced.framesDropped;
  }

  /** The line's counters (a provider may add its own). */
  counters(): Record<string, number> {
    return { framesSent: this.framesSent, framesDropped: this.framesDropped };
  }

  /** Ends the line, once: it leaves its room, and the provider says why on the wire. */
  end(ending: LineEnding): void {
    if (this.state === 'closed') return;
    // Left by itself (hung up, silent, the connection dropped), not ended by its room (the call ended,
    // a newer line, shutdown): only then may the side be no longer present.
    const leftByItself = this.state === 'active' && !this.endpoint!.isGone;
    this.state = 'closed';
    clearTimeout(this.firstMessageTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.endpoint?.detach();
    if (leftByItself) this.left();
    this.hangUp(ending);
  }
}
