// The WebSocket transport: media stream, listen and signalling sockets on the API's own HTTP server
// (its upgrade routes). Upgrades are admitted (./admission.ts) or refused with a JSON answer before the
// upgrade; admitted sockets become room endpoints (./endpoints.ts); a heartbeat drops sockets whose
// peer is gone; open signalling sockets get fresh TURN credentials (./iceRenewal.ts). Wire contract:
// ../../protocol.ts.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { errors } from '../../../../errors.js';
import { refuseUpgrade } from '../../../../http/connections.js';
import type { GaugeMetric } from '../../../../observability/metrics.js';
import { ConnectionSlots } from '../../../../ratelimit/connectionSlots.js';
import { isJoined, type CallRow } from '../../../calls.js';
import { verifyMediaSecret } from '../../../join.js';
import type { RefusalReason, Refused } from '../../admission.js';
import type { MediaPlane } from '../../plane.js';
import {
  CLOSE,
  HEARTBEAT_MS,
  LISTEN_PATH_PREFIX,
  LISTENER_BUFFER_CAP_BYTES,
  MAX_STREAM_FRAME_BYTES,
  MAX_WS_PAYLOAD_BYTES,
  REFUSAL,
  SIGNAL_PATH_PREFIX,
  STREAM_PATH_PREFIX,
} from '../../protocol.js';
import type { MediaTransport, TransportContext, TransportFactory, UpgradeRoute } from '../../transport.js';
import { admitSocket, type AdmittedSocket, type SocketAdmission } from './admission.js';
import { ListenSocket, SignalSocket, StreamSocket } from './endpoints.js';
import { IceServerRenewal } from './iceRenewal.js';
import { checkSignalFrame } from './signalling.js';

const SOCKET_CLOSE_GRACE_MS = 2_000;

interface HttpRefusal {
  status: number;
  detail: string;
  headers?: Readonly<Record<string, string>>;
}

/** How each reason to refuse is answered before the upgrade. */
function httpRefusal({ refused, retryAfterSeconds }: Refused): HttpRefusal {
  const table: Record<Exclude<RefusalReason, 'too_many_failed_attempts' | 'client_gone'>, HttpRefusal> = {
    no_endpoint: REFUSAL.noEndpoint,
    bad_source_id: REFUSAL.badSourceId,
    unknown_call: REFUSAL.unknownChannel,
    unknown_line: REFUSAL.unknownChannel,
    bad_token: REFUSAL.badToken,
    bad_unlock: REFUSAL.badUnlock,
    call_ended: REFUSAL.callEnded,
    not_ready: REFUSAL.notReady,
    too_many_sockets: REFUSAL.tooManySockets,
    shutting_down: REFUSAL.shuttingDown,
  };
  if (refused === 'too_many_failed_attempts') {
    const error = errors.tooManyFailedAttempts(retryAfterSeconds ?? 1);
    return { status: error.status, detail: String(error.detail), headers: error.headers };
  }
  return table[refused as keyof typeof table] ?? REFUSAL.internal;
}

type Socket = StreamSocket | ListenSocket | SignalSocket;

export class WebSocketTransport implements MediaTransport {
  readonly name = 'websocket';
  readonly upgrades: readonly UpgradeRoute[];
  readonly metrics: readonly GaugeMetric[];
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<Socket>();
  /** Sockets per side of a call and kind, counted from admission until the socket closes. */
  private readonly slots = new ConnectionSlots();
  private readonly heartbeat: NodeJS.Timeout;
  /** Stream input; listeners' chunks of the listen sockets closed since start (open ones count their own). */
  private readonly totals = { framesReceived: 0, bytesReceived: 0, chunksSent: 0, chunksDropped: 0 };
  /** Refused upgrades by HTTP status. */
  private readonly refusals: Record<number, number> = {};
  private readonly iceRenewal: IceServerRenewal | null;

  constructor(
    private readonly plane: MediaPlane,
    private readonly app: TransportContext['app'],
  ) {
    this.wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: MAX_WS_PAYLOAD_BYTES,
      // Not in @types/ws 8.18, honoured by ws 8.23: how long a close handshake may take.
      closeTimeout: SOCKET_CLOSE_GRACE_MS,
    } as ConstructorParameters<typeof WebSocketServer>[0]);
    this.heartbeat = setInterval(() => this.ping(), HEARTBEAT_MS);
    this.heartbeat.unref();
    const { iceServers, turn } = app.config;
    // The clock is read through `app`, where tests move it (TURN credentials' expiry).
    this.iceRenewal = turn ? new IceServerRenewal({ iceServers, turn }, () => app.now()) : null;
    const handle = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => this.handleUpgrade(req, socket, head);
    this.upgrades = [STREAM_PATH_PREFIX, LISTEN_PATH_PREFIX, SIGNAL_PATH_PREFIX].map((pathPrefix) => ({ pathPrefix, handle }));
    this.metrics = [
      { name: 'media_sockets_open', help: 'Media WebSockets (stream, listen, signalling) open on this instance', read: () => this.sockets.size },
      { name: 'media_listener_chunks_dropped', help: 'Audio chunks dropped for slow listeners since start', read: () => this.listenerChunks().chunksDropped },
    ];
  }

  private handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const address = this.app.failedAttempts.addressOf(req);
    const work = this.upgrade(req, socket, head, address).catch((err) => {
      this.plane.logger.error({ err }, 'media: upgrade failed');
      this.refuse(socket, REFUSAL.internal, address);
    });
    this.plane.track(work);
  }

  private async upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, address: string): Promise<void> {
    const { plane, app } = this;
    const ctx: SocketAdmission = {
      db: app.db,
      calls: plane.deps.calls,
      events: app.events,
      closing: () => plane.closing,
      url: new URL(req.url ?? '/', 'http://media.invalid'),
      socket,
      address,
      failedAttempts: app.failedAttempts,
      slots: this.slots,
      socketsPerSide: app.config.connections.mediaSocketsPerSide,
    };
    const admitted = await admitSocket(ctx);
    if ('refused' in admitted) {
      if (admitted.refused !== 'client_gone') this.refuse(socket, httpRefusal(admitted), address);
      return;
    }
    if (socket.destroyed) return;
    const call = ctx.call!;
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', (err) => plane.logger.debug({ err }, 'media: socket error'));
      if (plane.closing) {
        ws.close(CLOSE.shuttingDown.code, CLOSE.shuttingDown.reason);
        return;
      }
      try {
        this.open(ws, call, admitted);
      } catch (err) {
        plane.logger.error({ err }, 'media: could not open the socket');
        ws.close(CLOSE.internal.code, CLOSE.internal.reason);
      }
    });
  }

  /** An admitted socket joins its call's room; the room re-reads the call in case it changed meanwhile. */
  private open(ws: WebSocket, call: CallRow, { kind, side, sourceId, secret }: AdmittedSocket): void {
    const recheck = (row: CallRow) => {
      if (!verifyMediaSecret(row, side, kind, secret)) return 'link_replaced' as const;
      if (!isJoined(row, side)) return 'left' as const;
      return null;
    };
    if (kind === 'signal') {
      const signal = new SignalSocket(ws, side, call.id);
      this.adopt(signal);
      this.iceRenewal?.watch(signal);
      // Its frames go to the call's signalling, where the room is (here, or relayed to that instance).
      const inlet = this.plane.enter(call, signal, recheck);
      ws.on('message', (data, isBinary) => {
        if (signal.isGone) return;
        const checked = checkSignalFrame(data as Buffer, isBinary);
        if ('refused' in checked) return signal.closeWith(checked.refused);
        inlet.signal(checked.relay);
      });
      return;
    }
    if (kind === 'listen') {
      const listener = new ListenSocket(ws, side, LISTENER_BUFFER_CAP_BYTES);
      this.adopt(listener);
      // Whatever a listener sends is ignored.
      ws.on('message', () => {});
      ws.once('close', () => {
        this.totals.chunksSent += listener.chunksSent;
        this.totals.chunksDropped += listener.chunksDropped;
      });
      this.plane.enter(call, listener, recheck);
      return;
    }
    const stream = new StreamSocket(ws, side, sourceId);
    this.adopt(stream);
    const feed = this.plane.enter(call, stream, recheck).audio;
    ws.on('message', (data, isBinary) => {
      if (stream.isGone) return;
      if (!isBinary) return stream.closeWith(CLOSE.textFrame);
      const frame = data as Buffer;
      if (frame.length > MAX_STREAM_FRAME_BYTES) return stream.closeWith(CLOSE.tooBig);
      if (frame.length % 2 !== 0) return stream.closeWith(CLOSE.oddLength);
      if (frame.length === 0) return;
      this.totals.framesReceived++;
      this.totals.bytesReceived += frame.length;
      feed(frame);
    });
  }

  /** Common socket wiring: heartbeat answers, leaving the room when the socket closes. */
  private adopt(socket: Socket): void {
    this.sockets.add(socket);
    socket.ws.on('pong', () => {
      socket.alive = true;
    });
    socket.ws.once('close', () => {
      this.sockets.delete(socket);
      socket.detach();
    });
  }

  private refuse(socket: Duplex, refusal: HttpRefusal, address: string): void {
    this.refusals[refusal.status] = (this.refusals[refusal.status] ?? 0) + 1;
    // A wrong token or unlock, or an unknown channel, is a guess: it counts against the address.
    if (refusal.status === 401 || refusal.status === 404) this.plane.track(this.app.failedAttempts.record(address));
    refuseUpgrade(socket, refusal.status, refusal.detail, refusal.headers);
  }

  /** A socket that did not answer the previous ping is gone. */
  private ping(): void {
    for (const socket of this.sockets) {
      if (!socket.alive) {
        socket.ws.terminate();
        continue;
      }
      socket.alive = false;
      socket.ws.ping();
    }
  }

  /** Chunks sent to listeners and dropped for slow ones since start, open listeners included. */
  private listenerChunks(): { chunksSent: number; chunksDropped: number } {
    let { chunksSent, chunksDropped } = this.totals;
    for (const socket of this.sockets) {
      if (!(socket instanceof ListenSocket)) continue;
      chunksSent += socket.chunksSent;
      chunksDropped += socket.chunksDropped;
    }
    return { chunksSent, chunksDropped };
  }

  stats() {
    const refused = Object.fromEntries(Object.entries(this.refusals).map(([status, count]) => [`refused${status}`, count]));
    return { sockets: this.sockets.size, framesReceived: this.totals.framesReceived, bytesReceived: this.totals.bytesReceived, ...this.listenerChunks(), ...refused };
  }

  openConnections(): number {
    return this.sockets.size;
  }

  /** Closes what rooms did not (sockets between admission and their room): 1001, then a bounded wait. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    this.iceRenewal?.close();
    const open = [...this.sockets].map((socket) => socket.ws);
    for (const ws of open) if (ws.readyState === WebSocket.OPEN) ws.close(CLOSE.shuttingDown.code, CLOSE.shuttingDown.reason);
    const deadline = Date.now() + SOCKET_CLOSE_GRACE_MS;
    while (!open.every((ws) => ws.readyState === WebSocket.CLOSED) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20).unref());
    }
    for (const ws of open) if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
  }
}

export const webSocketTransport: TransportFactory = ({ plane, app }) => new WebSocketTransport(plane, app);
