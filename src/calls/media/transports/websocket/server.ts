// The WebSocket transport: media stream, listen and signalling sockets on the API's own HTTP server.
// Upgrades are admitted (./admission.ts) or refused with a JSON answer before the upgrade; admitted
// sockets become room endpoints (./endpoints.ts); a heartbeat drops sockets whose peer is gone; open
// signalling sockets get fresh TURN credentials (./iceRenewal.ts). Wire contract: ../../protocol.ts.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { Config } from '../../../../config.js';
import { errors } from '../../../../errors.js';
import type { EventBus } from '../../../../events/bus.js';
import { refuseUpgrade, serveAsPlainHttp } from '../../../../http/connections.js';
import type { FailedAttempts } from '../../../../ratelimit/failedAttempts.js';
import { ConnectionSlots } from '../../../../realtime/connectionSlots.js';
import { isJoined, type CallRow } from '../../../calls.js';
import { verifyMediaSecret } from '../../../join.js';
import type { RefusalReason, Refused } from '../../admission.js';
import type { MediaPlane, Transport } from '../../plane.js';
import {
  CLOSE,
  HEARTBEAT_MS,
  LISTENER_BUFFER_CAP_BYTES,
  MAX_STREAM_FRAME_BYTES,
  MAX_WS_PAYLOAD_BYTES,
  REFUSAL,
} from '../../protocol.js';
import { admitSocket, type AdmittedSocket, type SocketAdmission } from './admission.js';
import { ListenSocket, SignalSocket, StreamSocket } from './endpoints.js';
import { IceServerRenewal } from './iceRenewal.js';
import { checkSignalFrame } from './signalling.js';

export interface WebSocketTransportOptions {
  events: EventBus;
  /** Refused upgrades (401, 404) count per client address; an address over the limit gets 429. */
  failedAttempts: FailedAttempts;
  /** Open stream sockets, and open listen sockets, each side of a call may hold. */
  socketsPerSide: number;
  /** Upgrades under other paths that another transport serves on the same HTTP server (Twilio streams). */
  otherUpgrades?: ReadonlyArray<{ pathPrefix: string; handle(req: http.IncomingMessage, socket: Duplex, head: Buffer): void }>;
  /** ICE_SERVERS and TURN: with TURN, signalling sockets are sent fresh credentials while open. */
  ice: Pick<Config, 'iceServers' | 'turn'>;
  /** The server's clock (TURN credentials' expiry). */
  now: () => number;
}

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

export class WebSocketTransport implements Transport {
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<Socket>();
  /** Sockets per side of a call and kind, counted from admission until the socket closes. */
  private readonly slots = new ConnectionSlots();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly totals = { framesReceived: 0, bytesReceived: 0, chunksSent: 0, chunksDropped: 0 };
  private readonly refusals: Record<number, number> = {};
  private readonly iceRenewal: IceServerRenewal | null;

  constructor(
    private readonly plane: MediaPlane,
    private readonly options: WebSocketTransportOptions,
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
    const { ice } = options;
    this.iceRenewal = ice.turn ? new IceServerRenewal({ iceServers: ice.iceServers, turn: ice.turn }, options.now) : null;
    plane.addTransport(this);
  }

  /**
   * Serves WebSocket upgrades of `server` (a WebSocket upgrade elsewhere than /media gets a JSON 404).
   * Other upgrade requests (curl's `Upgrade: h2c`) are answered as ordinary HTTP/1.1 requests.
   */
  attach(server: http.Server): void {
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      // Node let go of the socket, error handling included: a client that resets must not end the process.
      socket.on('error', (err) => this.plane.logger.debug({ err }, 'media: upgrade socket error'));
      if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return serveAsPlainHttp(server, req, socket, head);
      const other = this.options.otherUpgrades?.find((upgrade) => (req.url ?? '').startsWith(upgrade.pathPrefix));
      if (other) other.handle(req, socket, head);
      else this.handleUpgrade(req, socket, head);
    });
  }

  private handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const address = this.options.failedAttempts.addressOf(req);
    const work = this.upgrade(req, socket, head, address).catch((err) => {
      this.plane.logger.error({ err }, 'media: upgrade failed');
      this.refuse(socket, REFUSAL.internal, address);
    });
    this.plane.track(work);
  }

  private async upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, address: string): Promise<void> {
    const { plane, options } = this;
    const ctx: SocketAdmission = {
      db: plane.deps.db,
      events: options.events,
      closing: () => plane.closing,
      url: new URL(req.url ?? '/', 'http://media.invalid'),
      socket,
      address,
      failedAttempts: options.failedAttempts,
      slots: this.slots,
      socketsPerSide: options.socketsPerSide,
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
    if (refusal.status === 401 || refusal.status === 404) this.plane.track(this.options.failedAttempts.record(address));
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

  stats() {
    return { ...this.totals, refusals: { ...this.refusals }, sockets: this.sockets.size };
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

export function attachWebSockets(server: http.Server, plane: MediaPlane, options: WebSocketTransportOptions): WebSocketTransport {
  const transport = new WebSocketTransport(plane, options);
  transport.attach(server);
  return transport;
}
