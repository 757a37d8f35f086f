// One PBX connection speaking AudioSocket: the UUID that names its line, then audio both ways. Once
// admitted it is a room endpoint playing one side: its 8 kHz voice resampled to 24 kHz in, what the
// side hears resampled to 8 kHz and paced out in 20 ms frames. Protocol: ./protocol.ts.
import type net from 'node:net';
import type { Logger } from 'pino';
import { fingerprint } from '../../../../logging/redact.js';
import type { Side } from '../../../side.js';
import type { Refused } from '../../admission.js';
import { PacedFrames } from '../../audio/pacedFrames.js';
import { Downsampler24kTo8k, Upsampler8kTo24k } from '../../audio/pcm.js';
import { EndpointState, type EndReason, type MediaDuplex } from '../../endpoints.js';
import type { AudioFeed } from '../../room/room.js';
import {
  FRAME_BYTES,
  FRAME_MS,
  KIND,
  LINE_ERROR,
  MessageReader,
  audioMessage,
  errorMessage,
  hangupMessage,
  uuidFromBytes,
  type Message,
} from './protocol.js';

/** What may wait to be played to a line: 5 s of 8 kHz audio (interpreters can answer in bursts). */
const MAX_QUEUED_BYTES = 5 * 16_000;
/** Unsent bytes in the TCP socket beyond which frames are dropped (the PBX is not reading). */
const MAX_SOCKET_BACKLOG_BYTES = 64 * 1024;
/** A partial last frame is padded with silence once no more audio came for this long. */
const TAIL_WAIT_MS = 2 * FRAME_MS;
export const CLOSE_GRACE_MS = 2_000;

const REFUSAL_CODES: Record<Refused['refused'], number> = {
  unknown_line: LINE_ERROR.unknownLine,
  unknown_call: LINE_ERROR.unknownLine,
  call_ended: LINE_ERROR.callEnded,
  not_ready: LINE_ERROR.notReady,
  shutting_down: LINE_ERROR.shuttingDown,
  too_many_failed_attempts: LINE_ERROR.tooManyFailedAttempts,
  no_endpoint: LINE_ERROR.internal,
  bad_source_id: LINE_ERROR.internal,
  bad_token: LINE_ERROR.internal,
  bad_unlock: LINE_ERROR.internal,
  too_many_sockets: LINE_ERROR.internal,
  client_gone: LINE_ERROR.internal,
};

const HANGUP_REASONS: Record<EndReason, string> = {
  call_ended: 'call ended',
  line_replaced: 'line replaced',
  shutting_down: 'server shutting down',
  source_replaced: 'line connected again',
  link_replaced: 'link replaced',
  left: 'left the call',
  reconnect: 'reconnect',
};

/** The line as its room sees it: the side's voice in, what the side hears out. */
class PhoneLine extends EndpointState implements MediaDuplex {
  readonly credential = 'line' as const;
  readonly kind = 'line';
  readonly format = 'pcm' as const;
  readonly sourceKey: string;

  constructor(
    readonly side: Side,
    private readonly connection: AudioSocketConnection,
  ) {
    super();
    this.sourceKey = `line:${connection.lineRef}`;
  }

  audio(pcm24k: Buffer): void {
    this.connection.play(pcm24k);
  }

  protected close(reason: EndReason): void {
    this.connection.hangup(HANGUP_REASONS[reason]);
  }
}

export interface AdmittedLine {
  callId: string;
  side: Side;
  /** Puts the line into its call's room; returns the feed of its voice. */
  enter(line: MediaDuplex): AudioFeed;
}

export interface LineHost {
  readonly log: Logger;
  readonly uuidTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** Runs the line's admission and, when admitted, puts it into its call's room. */
  admit(connection: AudioSocketConnection): Promise<Refused | AdmittedLine>;
  closed(connection: AudioSocketConnection): void;
}

export class AudioSocketConnection {
  /** The line id is a secret (whoever knows it plays the side): logs name it by fingerprint only. */
  lineId = '';
  private state: 'awaiting_uuid' | 'validating' | 'active' | 'closed' = 'awaiting_uuid';
  private readonly reader = new MessageReader();
  private readonly upsampler = new Upsampler8kTo24k();
  private readonly downsampler = new Downsampler24kTo8k();
  private line: PhoneLine | null = null;
  private feed: AudioFeed | null = null;
  private readonly paced = new PacedFrames({
    frameBytes: FRAME_BYTES,
    frameMs: FRAME_MS,
    maxQueuedBytes: MAX_QUEUED_BYTES,
    tailWaitMs: TAIL_WAIT_MS,
    silence: 0,
  });
  private readonly uuidTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | null = null;
  framesSent = 0;
  /** Frames dropped: beyond the queue limit, or while the socket was backed up. */
  get framesDropped(): number {
    return this.paced.framesDropped;
  }

  constructor(
    readonly socket: net.Socket,
    private readonly host: LineHost,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (data) => this.receive(data));
    socket.on('error', (err) => host.log.debug({ err }, 'audiosocket: connection error'));
    socket.on('close', () => this.closed());
    this.uuidTimer = setTimeout(() => {
      if (this.state === 'awaiting_uuid') this.refuse(LINE_ERROR.badFirstMessage, 'no UUID within the time allowed');
    }, host.uuidTimeoutMs);
    this.uuidTimer.unref();
  }

  /** How logs name the line: a fingerprint of its id, never the id. */
  get lineRef(): string | null {
    return this.lineId ? fingerprint(this.lineId) : null;
  }

  private get log(): Logger {
    return this.host.log;
  }

  private get isClosed(): boolean {
    return this.state === 'closed';
  }

  private receive(data: Buffer): void {
    if (this.state === 'closed') return;
    this.idleTimer?.refresh();
    for (const message of this.reader.push(data)) {
      this.handle(message);
      if (this.isClosed) return;
    }
  }

  private handle({ kind, payload }: Message): void {
    if (this.state === 'awaiting_uuid') {
      if (kind !== KIND.uuid || payload.length !== 16) {
        this.refuse(LINE_ERROR.badFirstMessage, `first message must be a 16-byte UUID, got kind 0x${kind.toString(16)}`);
        return;
      }
      clearTimeout(this.uuidTimer);
      this.lineId = uuidFromBytes(payload);
      this.state = 'validating';
      void this.join();
      return;
    }
    switch (kind) {
      case KIND.audio:
        // Audio that arrives while the line id is being checked is dropped (a few milliseconds).
        if (this.state === 'active' && this.feed && payload.length) this.feed(this.upsampler.process(payload));
        break;
      case KIND.hangup:
        this.log.debug({ line: this.lineRef }, 'audiosocket: the PBX hung up');
        this.end();
        break;
      case KIND.error:
        this.log.warn({ line: this.lineRef, code: payload.length ? payload[0] : null }, 'audiosocket: the PBX reported an error');
        this.end();
        break;
      case KIND.dtmf:
        // Digits are not logged: callers type PINs and card numbers.
        this.log.debug({ line: this.lineRef }, 'audiosocket: DTMF ignored');
        break;
      default:
        this.log.debug({ line: this.lineRef, kind }, 'audiosocket: unknown message kind ignored');
    }
  }

  private async join(): Promise<void> {
    try {
      const admitted = await this.host.admit(this);
      if ('refused' in admitted) {
        this.refuse(REFUSAL_CODES[admitted.refused], admitted.refused);
        return;
      }
      // The PBX went away while the line was being checked.
      if (this.state !== 'validating') return;
      const line = new PhoneLine(admitted.side, this);
      this.line = line;
      this.state = 'active';
      this.feed = admitted.enter(line);
      this.idleTimer = setTimeout(() => this.hangUpIdle(), this.host.idleTimeoutMs);
      this.idleTimer.unref();
      this.log.info({ line: this.lineRef, call_id: admitted.callId, side: admitted.side }, 'audiosocket: line joined');
    } catch (err) {
      this.log.error({ err, line: this.lineRef }, 'audiosocket: could not open the line');
      this.refuse(LINE_ERROR.internal, 'internal error');
    }
  }

  /** Error frame, then close (the PBX learns why in the code). */
  private refuse(code: number, why: string): void {
    if (this.state === 'closed') return;
    this.log.info({ line: this.lineRef, why }, 'audiosocket: line refused');
    this.state = 'closed';
    this.socket.end(errorMessage(code));
    this.destroyLater();
  }

  /** What the side hears (24 kHz), queued for pacing at 8 kHz. */
  play(pcm24k: Buffer): void {
    if (this.state !== 'active') return;
    this.paced.push(this.downsampler.process(pcm24k), Date.now());
  }

  /** Ends the line: hangup to the PBX, then the connection closes. */
  hangup(reason: string): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.line?.detach();
    if (this.state === 'closed') return;
    this.log.info({ line: this.lineRef, reason }, 'audiosocket: hanging up');
    this.state = 'closed';
    this.socket.end(hangupMessage());
    this.destroyLater();
  }

  /** A line that went quiet: the PBX is gone without saying so. */
  private hangUpIdle(): void {
    this.hangup(`no message for ${this.host.idleTimeoutMs} ms`);
  }

  /** Sends what is due: one 320-byte frame per 20 ms of wall time, never an empty frame. */
  pump(now: number): void {
    if (this.state !== 'active') return;
    this.paced.due(now, (frame) => {
      if (this.socket.writableLength > MAX_SOCKET_BACKLOG_BYTES) return false;
      this.socket.write(audioMessage(frame));
      this.framesSent++;
      return true;
    });
  }

  /** The PBX hung up or reported an error: the line leaves the call (the call stays open). */
  private end(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.line?.detach();
    this.socket.end();
    this.destroyLater();
  }

  private destroyLater(): void {
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  private closed(): void {
    clearTimeout(this.uuidTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.state = 'closed';
    this.line?.detach();
    this.host.closed(this);
  }
}
