// One PBX connection speaking AudioSocket (./protocol.ts) as a phone line (../phone/line.ts): the UUID
// that names its line, then 8 kHz slin16 audio both ways, one message per frame, over TCP.
import type net from 'node:net';
import { fingerprint } from '../../../../observability/redact.js';
import type { Refused } from '../../admission.js';
import type { EndReason } from '../../endpoints.js';
import { PhoneLine, type AdmittedLine, type LineEnding, type LineHost, type PhoneCodec } from '../phone/line.js';
import { CLOSE_GRACE_MS } from '../phone/lines.js';
import {
  FRAME_BYTES,
  KIND,
  LINE_ERROR,
  MessageReader,
  audioMessage,
  errorMessage,
  hangupMessage,
  uuidFromBytes,
  type Message,
} from './protocol.js';

/** Signed linear 16-bit: the wire carries 8 kHz PCM as it is. */
const SLIN16: PhoneCodec = { frameBytes: FRAME_BYTES, silence: 0, encode: (pcm8k) => pcm8k, decode: (wire) => wire };

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

export class AudioSocketLine extends PhoneLine {
  protected readonly kind = 'line';
  /** The line id is a secret (whoever knows it plays the side): logs name it by fingerprint only. */
  lineId = '';
  private readonly reader = new MessageReader();

  constructor(
    readonly socket: net.Socket,
    host: LineHost,
    /** Admission of the line its UUID names. */
    private readonly admit: (line: AudioSocketLine) => Promise<AdmittedLine | Refused>,
  ) {
    super(SLIN16, host);
    socket.setNoDelay(true);
    socket.on('data', (data) => this.receive(data));
    socket.on('error', (err) => host.log.debug({ err }, 'audiosocket: connection error'));
    socket.on('close', () => this.connectionClosed());
  }

  /** How logs name the line: a fingerprint of its id, never the id. */
  get lineRef(): string | null {
    return this.lineId ? fingerprint(this.lineId) : null;
  }

  protected logFields() {
    return { line: this.lineRef };
  }

  private receive(data: Buffer): void {
    if (this.isClosed) return;
    this.heardFrom();
    for (const message of this.reader.push(data)) {
      this.handle(message);
      if (this.isClosed) return;
    }
  }

  private handle({ kind, payload }: Message): void {
    if (this.awaitingFirstMessage) {
      if (kind !== KIND.uuid || payload.length !== 16) {
        this.end({ by: 'bad_message', detail: `first message must be a 16-byte UUID, got kind 0x${kind.toString(16)}` });
        return;
      }
      this.lineId = uuidFromBytes(payload);
      void this.join(() => this.admit(this));
      return;
    }
    const log = this.host.log;
    switch (kind) {
      case KIND.audio:
        this.hear(payload);
        break;
      case KIND.hangup:
        log.debug({ line: this.lineRef }, 'audiosocket: the PBX hung up');
        this.end({ by: 'hung_up' });
        break;
      case KIND.error:
        log.warn({ line: this.lineRef, code: payload.length ? payload[0] : null }, 'audiosocket: the PBX reported an error');
        this.end({ by: 'hung_up' });
        break;
      case KIND.dtmf:
        // Digits are not logged: callers type PINs and card numbers.
        log.debug({ line: this.lineRef }, 'audiosocket: DTMF ignored');
        break;
      default:
        log.debug({ line: this.lineRef, kind }, 'audiosocket: unknown message kind ignored');
    }
  }

  protected get unsentBytes(): number {
    return this.socket.writableLength;
  }

  protected sendFrame(frame: Buffer): void {
    this.socket.write(audioMessage(frame));
  }

  /** A hangup message, or an error message whose code says why (the PBX may not take the line), then the close. */
  protected hangUp(ending: LineEnding): void {
    switch (ending.by) {
      case 'server':
        return this.hangUpWith(HANGUP_REASONS[ending.reason]);
      case 'silence':
        return this.hangUpWith(`no message for ${this.host.idleTimeoutMs} ms`);
      case 'no_first_message':
        return this.refuse(LINE_ERROR.badFirstMessage, 'no UUID within the time allowed');
      case 'bad_message':
        return this.refuse(LINE_ERROR.badFirstMessage, ending.detail);
      case 'refused':
        return this.refuse(REFUSAL_CODES[ending.refusal.refused], ending.refusal.refused);
      case 'internal_error':
        return this.refuse(LINE_ERROR.internal, 'internal error');
      case 'hung_up':
        return this.closeAfter(null);
      case 'closed':
        return;
    }
  }

  private hangUpWith(reason: string): void {
    this.host.log.info({ line: this.lineRef, reason }, 'audiosocket: hanging up');
    this.closeAfter(hangupMessage());
  }

  private refuse(code: number, why: string): void {
    this.host.log.info({ line: this.lineRef, why }, 'audiosocket: line refused');
    this.closeAfter(errorMessage(code));
  }

  /** Ends our side after `last`; a PBX that does not close its own within the grace is dropped. */
  private closeAfter(last: Buffer | null): void {
    if (last) this.socket.end(last);
    else this.socket.end();
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  destroy(): void {
    this.socket.destroy();
  }
}
