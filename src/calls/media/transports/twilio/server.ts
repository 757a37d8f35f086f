// The Twilio transport: Media Streams WebSockets at /media/twilio/{channel_id} on the API's HTTP server
// (its upgrade route). Upgrades are admitted by the path or refused with a JSON answer; the stream's
// token is checked at Twilio's `start` (./admission.ts). Streams: ./stream.ts, on the shared phone-line
// base (../phone/); protocol: ./protocol.ts.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { errors } from '../../../../errors.js';
import { refuseUpgrade } from '../../../../http/connections.js';
import type { GaugeMetric } from '../../../../observability/metrics.js';
import { markLeft, type CallRow } from '../../../calls.js';
import { TWILIO_STREAM_PATH_PREFIX } from '../../../dial.js';
import { verifyMediaSecret } from '../../../join.js';
import type { Side } from '../../../side.js';
import { refuse, type Refused } from '../../admission.js';
import type { MediaPlane } from '../../plane.js';
import type { MediaTransport, TransportContext, TransportFactory, UpgradeRoute } from '../../transport.js';
import type { AdmittedLine } from '../phone/line.js';
import { PhoneLines } from '../phone/lines.js';
import { admitChannel, admitToken, type StreamAdmission } from './admission.js';
import { CLOSE, MAX_MESSAGE_BYTES } from './protocol.js';
import { TwilioStream, type StreamProvider } from './stream.js';

/** Twilio must send `start` within this after the upgrade. */
const START_TIMEOUT_MS = 10_000;
/** A stream that sends nothing for this long is closed (Twilio sends audio every 20 ms). */
const IDLE_TIMEOUT_MS = 15_000;

const REFUSALS: Record<Refused['refused'], { status: number; detail: string }> = {
  unknown_call: { status: 404, detail: 'no such stream channel' },
  call_ended: { status: 409, detail: 'the call has ended' },
  not_ready: { status: 409, detail: "the call is not ready: the customer's language is not known yet" },
  shutting_down: { status: 503, detail: 'server shutting down' },
  too_many_failed_attempts: { status: 429, detail: '' },
  no_endpoint: { status: 404, detail: 'no such stream channel' },
  unknown_line: { status: 404, detail: 'no such stream channel' },
  bad_source_id: { status: 400, detail: 'bad source' },
  bad_token: { status: 401, detail: 'invalid token' },
  bad_unlock: { status: 401, detail: 'invalid token' },
  too_many_sockets: { status: 429, detail: 'too many sockets' },
  client_gone: { status: 400, detail: 'client gone' },
};

export class TwilioTransport implements MediaTransport {
  readonly name = 'twilio';
  readonly upgrades: readonly UpgradeRoute[];
  readonly metrics: readonly GaugeMetric[];
  private readonly wss: WebSocketServer;
  private readonly lines: PhoneLines;
  private readonly provider: StreamProvider;

  constructor(
    private readonly plane: MediaPlane,
    private readonly app: TransportContext['app'],
  ) {
    this.wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES });
    this.lines = new PhoneLines(this.name, plane, plane.logger.child({ transport: 'twilio' }), {
      firstMessageTimeoutMs: START_TIMEOUT_MS,
      idleTimeoutMs: IDLE_TIMEOUT_MS,
    });
    this.provider = {
      admit: (stream, token) => this.admitStart(stream, token),
      left: (stream) => plane.track(markLeft({ db: app.db, events: app.events }, stream.call, stream.side)),
    };
    this.upgrades = [{ pathPrefix: TWILIO_STREAM_PATH_PREFIX, handle: (req, socket, head) => this.handleUpgrade(req, socket, head) }];
    this.metrics = [
      { name: 'twilio_streams_open', help: 'Twilio media streams admitted on this instance', read: () => this.lines.active },
      { name: 'media_twilio_frames_dropped', help: 'Frames dropped for Twilio streams since start', read: () => this.lines.counters().framesDropped },
    ];
  }

  private handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const address = this.app.failedAttempts.addressOf(req);
    const work = this.admitUpgrade(req, socket, head, address).catch((err) => {
      this.plane.logger.error({ err }, 'twilio: upgrade failed');
      refuseUpgrade(socket, 500, 'internal error');
    });
    this.plane.track(work);
  }

  private async admitUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, address: string): Promise<void> {
    const ctx: StreamAdmission = {
      calls: this.plane.deps.calls,
      closing: () => this.plane.closing,
      address,
      failedAttempts: this.app.failedAttempts,
      channel: new URL(req.url ?? '/', 'http://media.invalid').pathname.slice(TWILIO_STREAM_PATH_PREFIX.length),
    };
    const admitted = await admitChannel(ctx);
    if ('refused' in admitted) {
      if (admitted.refused === 'too_many_failed_attempts') {
        const error = errors.tooManyFailedAttempts(admitted.retryAfterSeconds ?? 1);
        return refuseUpgrade(socket, error.status, String(error.detail), error.headers);
      }
      const refusal = REFUSALS[admitted.refused];
      if (refusal.status === 404) this.plane.track(this.app.failedAttempts.record(address));
      return refuseUpgrade(socket, refusal.status, refusal.detail);
    }
    if (socket.destroyed) return;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.open(ws, admitted.call, admitted.side, address));
  }

  private open(ws: WebSocket, call: CallRow, side: Side, address: string): void {
    if (this.plane.closing) {
      ws.close(CLOSE.shuttingDown.code, CLOSE.shuttingDown.reason);
      return;
    }
    this.lines.add(new TwilioStream(ws, call, side, address, this.lines, this.provider));
  }

  /** Twilio's `start`: the token decides; a wrong one counts as a guess of the address. */
  private async admitStart(stream: TwilioStream, token: string | null): Promise<AdmittedLine | Refused> {
    const { call, side } = stream;
    const credential = await admitToken({ db: this.app.db, events: this.app.events }, call, side, token);
    if (!credential) {
      await this.app.failedAttempts.record(stream.address);
      return refuse('bad_token');
    }
    return {
      call,
      side,
      credential,
      sourceKey: `twilio:${side}`,
      // A stream admitted by the side's link goes when the link is replaced; a dialled phone by dialling again.
      recheck: (row) => (credential === 'link' && !verifyMediaSecret(row, side, 'stream', token) ? 'link_replaced' : null),
    };
  }

  stats() {
    return { streams: this.lines.active, ...this.lines.counters() };
  }

  openConnections(): number {
    return this.lines.size;
  }

  close(): Promise<void> {
    return this.lines.close();
  }
}

export const twilioTransport: TransportFactory = ({ plane, app }) => new TwilioTransport(plane, app);
