// The Twilio transport: Media Streams WebSockets at /media/twilio/{channel_id} on the API's HTTP server
// (the WebSocket transport hands these upgrades over). Upgrades are admitted by the path or refused
// with a JSON answer; the stream's token is checked at Twilio's `start` (./admission.ts). One pacer
// sends every stream's audio in real time. Connections: ./stream.ts; protocol: ./protocol.ts.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { errors } from '../../../../errors.js';
import type { EventBus } from '../../../../events/bus.js';
import { refuseUpgrade } from '../../../../http/connections.js';
import type { FailedAttempts } from '../../../../ratelimit/failedAttempts.js';
import { markLeft, type CallRow } from '../../../calls.js';
import { TWILIO_STREAM_PATH_PREFIX } from '../../../dial.js';
import { verifyMediaSecret } from '../../../join.js';
import type { Side } from '../../../side.js';
import type { Refused } from '../../admission.js';
import type { MediaPlane, Transport } from '../../plane.js';
import { admitChannel, admitToken, type StreamAdmission } from './admission.js';
import { CLOSE, MAX_MESSAGE_BYTES } from './protocol.js';
import { TwilioStreamConnection, type StreamHost } from './stream.js';

export interface TwilioTransportOptions {
  events: EventBus;
  failedAttempts: FailedAttempts;
  /** Twilio must send `start` within this after the upgrade. */
  startTimeoutMs?: number;
  /** A stream that sends nothing for this long is closed (Twilio sends audio every 20 ms). */
  idleTimeoutMs?: number;
}

const PACE_TICK_MS = 10;
const CLOSE_GRACE_MS = 2_000;

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

export class TwilioTransport implements Transport {
  private readonly wss: WebSocketServer;
  private readonly connections = new Set<TwilioStreamConnection>();
  private pacer: NodeJS.Timeout | null = null;
  private readonly totals = { twilioFramesSent: 0, twilioFramesDropped: 0, twilioClears: 0 };
  private readonly host: StreamHost;

  constructor(
    private readonly plane: MediaPlane,
    private readonly options: TwilioTransportOptions,
  ) {
    this.wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES });
    const log = plane.logger.child({ transport: 'twilio' });
    this.host = {
      log,
      startTimeoutMs: options.startTimeoutMs ?? 10_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 15_000,
      start: (connection, start) => this.start(connection, start.token),
      left: (connection) => plane.track(markLeft({ db: plane.deps.db, events: options.events }, connection.call, connection.side)),
      closed: (connection) => {
        this.totals.twilioFramesSent += connection.framesSent;
        this.totals.twilioFramesDropped += connection.framesDropped;
        this.totals.twilioClears += connection.clears;
        this.connections.delete(connection);
        if (this.pacer && !this.connections.size) {
          clearInterval(this.pacer);
          this.pacer = null;
        }
      },
    };
    plane.addTransport(this);
  }

  /** What the WebSocket transport hands over: upgrades under /media/twilio/. */
  get upgrade() {
    return { pathPrefix: TWILIO_STREAM_PATH_PREFIX, handle: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => this.handleUpgrade(req, socket, head) };
  }

  private handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const address = this.options.failedAttempts.addressOf(req);
    const work = this.admitUpgrade(req, socket, head, address).catch((err) => {
      this.plane.logger.error({ err }, 'twilio: upgrade failed');
      refuseUpgrade(socket, 500, 'internal error');
    });
    this.plane.track(work);
  }

  private async admitUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, address: string): Promise<void> {
    const ctx: StreamAdmission = {
      db: this.plane.deps.db,
      closing: () => this.plane.closing,
      address,
      failedAttempts: this.options.failedAttempts,
      channel: new URL(req.url ?? '/', 'http://media.invalid').pathname.slice(TWILIO_STREAM_PATH_PREFIX.length),
    };
    const admitted = await admitChannel(ctx);
    if ('refused' in admitted) {
      if (admitted.refused === 'too_many_failed_attempts') {
        const error = errors.tooManyFailedAttempts(admitted.retryAfterSeconds ?? 1);
        return refuseUpgrade(socket, error.status, String(error.detail), error.headers);
      }
      const refusal = REFUSALS[admitted.refused];
      if (refusal.status === 404) this.plane.track(this.options.failedAttempts.record(address));
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
    const connection = new TwilioStreamConnection(ws, call, side, address, this.host);
    this.connections.add(connection);
    this.pacer ??= setInterval(() => {
      const now = Date.now();
      for (const open of this.connections) open.pump(now);
    }, PACE_TICK_MS);
    this.pacer.unref();
  }

  /** Twilio's `start`: the token decides; a wrong one counts as a guess of the address. */
  private async start(connection: TwilioStreamConnection, token: string | null) {
    const { call, side } = connection;
    const credential = await admitToken({ db: this.plane.deps.db, events: this.options.events }, call, side, token);
    if (!credential) {
      await this.options.failedAttempts.record(connection.address);
      return null;
    }
    // A stream admitted by the side's link goes when the link is replaced; a dialled phone by dialling again.
    const recheck = (row: CallRow) => (credential === 'link' && !verifyMediaSecret(row, side, 'stream', token) ? ('link_replaced' as const) : null);
    return { credential, enter: (stream: Parameters<MediaPlane['enter']>[1]) => this.plane.enter(call, stream, recheck).audio };
  }

  stats() {
    let { twilioFramesSent, twilioFramesDropped, twilioClears } = this.totals;
    let twilioStreams = 0;
    for (const connection of this.connections) {
      twilioFramesSent += connection.framesSent;
      twilioFramesDropped += connection.framesDropped;
      twilioClears += connection.clears;
      if (connection.isActive) twilioStreams++;
    }
    return { twilioStreams, twilioFramesSent, twilioFramesDropped, twilioClears };
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.close(CLOSE.shuttingDown);
    const deadline = Date.now() + CLOSE_GRACE_MS;
    while (this.connections.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20).unref());
    for (const connection of this.connections) connection.ws.terminate();
    if (this.pacer) clearInterval(this.pacer);
    this.pacer = null;
  }
}
