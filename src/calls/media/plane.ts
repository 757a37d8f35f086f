// The media plane: WebSocket stream and listen endpoints on the API's HTTP server, one room per open
// call, lifecycle from call events on the bus, and the entry point phone lines (AudioSocket) join by.
// Wire contract: ./protocol.ts.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import type { Config } from '../../config.js';
import { errors } from '../../errors.js';
import type { EventBus } from '../../events/bus.js';
import type { BusEvent } from '../../events/types.js';
import { serveAsPlainHttp } from '../../http/connections.js';
import type { FailedAttempts } from '../../ratelimit/failedAttempts.js';
import { ConnectionSlots } from '../../realtime/connectionSlots.js';
import { isJoined, lineOf, markJoined, otherSide, type CallRow, type Side } from '../calls.js';
import { isReady, parseChannelId, verifyMediaSecret } from '../join.js';
import { LineConn, ListenConn, StreamConn, type LineEndpoint } from './connections.js';
import { unconfiguredInterpreterFactory, type InterpreterFactory } from './interpreter.js';
import {
  CLOSE,
  HEARTBEAT_MS,
  LISTENER_BUFFER_CAP_BYTES,
  LISTEN_PATH_PREFIX,
  MAX_STREAM_FRAME_BYTES,
  MAX_WS_PAYLOAD_BYTES,
  NOTICE,
  REFUSAL,
  SOURCE_ID_PATTERN,
  STREAM_PATH_PREFIX,
  notice,
} from './protocol.js';
import { CallRoom, type RoomSettings } from './room.js';

export interface MediaPlaneOptions {
  /** Live interpretation engine; default: none (live calls stay up, untranslated, with a notice). */
  interpreterFactory?: InterpreterFactory;
  /** How often accumulated interpretation time is charged; default 5000 ms. */
  billingIntervalMs?: number;
  /** Unsent bytes beyond which a listener loses chunks; default 1 s of audio. */
  listenerBufferCapBytes?: number;
  /** Ping interval; a socket that missed the previous ping is dropped. Default 30 s. */
  heartbeatMs?: number;
  /** Open stream sockets, and open listen sockets, each side of a call may hold; default from config. */
  socketsPerSide?: number;
}

export interface MediaDeps {
  config: Pick<Config, 'connections'>;
  db: Knex;
  events: EventBus;
  logger: Logger;
  /** Refused upgrades (401, 404) count per client address; an address over the limit gets 429. */
  failedAttempts: FailedAttempts;
}

export interface MediaStats {
  rooms: number;
  streams: number;
  listeners: number;
  lines: number;
  framesReceived: number;
  bytesReceived: number;
  chunksSent: number;
  chunksDropped: number;
  refusals: Record<number, number>;
  /** Stream and listen sockets open (in a room or not). */
  sockets: number;
}

/** What a phone line gets once its UUID matched an open call's line. */
export interface LineSession {
  callId: string;
  side: Side;
  /** The line's voice, already at 24 kHz. */
  push(pcm24k: Buffer): void;
  /** The PBX went away (hangup, error, closed connection). */
  close(): void;
}

export type LineRefusal = 'unknown_line' | 'call_ended' | 'not_ready' | 'shutting_down';

const TICK_MS = 20;
const SOCKET_CLOSE_GRACE_MS = 2_000;

interface Refusal {
  status: number;
  detail: unknown;
  headers?: Readonly<Record<string, string>>;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  409: 'Conflict',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export class MediaPlane {
  private readonly rooms = new Map<string, CallRoom>();
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<StreamConn | ListenConn>();
  /** Sockets per side of a call and kind, counted from admission until the socket closes. */
  private readonly socketSlots = new ConnectionSlots();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly log: Logger;
  private settings: RoomSettings & { heartbeatMs: number; socketsPerSide: number };
  private readonly unsubscribe: () => void;
  private ticker: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private closing = false;
  private totals = { framesReceived: 0, bytesReceived: 0, chunksSent: 0, chunksDropped: 0 };
  private refusals: Record<number, number> = {};
  /** Where each pending upgrade comes from, for counting its refusal against that address. */
  private readonly upgradeAddresses = new WeakMap<Duplex, string>();

  constructor(
    private readonly deps: MediaDeps,
    options: MediaPlaneOptions = {},
  ) {
    this.log = deps.logger.child({ component: 'media' });
    this.settings = {
      interpreterFactory: options.interpreterFactory ?? unconfiguredInterpreterFactory,
      billingIntervalMs: options.billingIntervalMs ?? 5_000,
      listenerBufferCapBytes: options.listenerBufferCapBytes ?? LISTENER_BUFFER_CAP_BYTES,
      heartbeatMs: options.heartbeatMs ?? HEARTBEAT_MS,
      socketsPerSide: options.socketsPerSide ?? deps.config.connections.mediaSocketsPerSide,
    };
    this.wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: MAX_WS_PAYLOAD_BYTES,
      // Not in @types/ws 8.18, honoured by ws 8.23: how long a close handshake may take.
      closeTimeout: SOCKET_CLOSE_GRACE_MS,
    } as ConstructorParameters<typeof WebSocketServer>[0]);
    this.unsubscribe = deps.events.subscribe((event) => this.onEvent(event));
    this.startHeartbeat();
  }

  /** Changes settings for rooms from now on (tests inject a fake interpreter and a fast billing clock). */
  configure(options: MediaPlaneOptions): void {
    const { interpreterFactory, billingIntervalMs, listenerBufferCapBytes, heartbeatMs, socketsPerSide } = options;
    if (interpreterFactory) this.settings.interpreterFactory = interpreterFactory;
    if (socketsPerSide !== undefined) this.settings.socketsPerSide = socketsPerSide;
    if (billingIntervalMs !== undefined) this.settings.billingIntervalMs = billingIntervalMs;
    if (listenerBufferCapBytes !== undefined) this.settings.listenerBufferCapBytes = listenerBufferCapBytes;
    if (heartbeatMs !== undefined && heartbeatMs !== this.settings.heartbeatMs) {
      this.settings.heartbeatMs = heartbeatMs;
      this.startHeartbeat();
    }
  }

  /**
   * Serves WebSocket upgrades of `server` (a WebSocket upgrade elsewhere than /media gets a JSON 404).
   * Other upgrade requests (curl's `Upgrade: h2c`) are answered as ordinary HTTP/1.1 requests.
   */
  attach(server: http.Server): void {
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      // Node let go of the socket, error handling included: a client that resets must not end the process.
      socket.on('error', (err) => this.log.debug({ err }, 'media: upgrade socket error'));
      if ((req.headers.upgrade ?? '').toLowerCase() === 'websocket') this.handleUpgrade(req, socket, head);
      else serveAsPlainHttp(server, req, socket, head);
    });
  }

  // ---- upgrades --------------------------------------------------------------------------------

  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    this.upgradeAddresses.set(socket, this.deps.failedAttempts.addressOf(req));
    const work = this.upgrade(req, socket, head).catch((err) => {
      this.log.error({ err }, 'media: upgrade failed');
      this.refuse(socket, REFUSAL.internal);
    });
    this.track(work);
  }

  private async upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const wait = await this.deps.failedAttempts.retryAfter(this.upgradeAddresses.get(socket)!);
    if (wait) return this.refuse(socket, errors.tooManyFailedAttempts(wait));
    const url = new URL(req.url ?? '/', 'http://media.invalid');
    const kind = url.pathname.startsWith(STREAM_PATH_PREFIX) ? 'stream' : url.pathname.startsWith(LISTEN_PATH_PREFIX) ? 'listen' : null;
    if (!kind) return this.refuse(socket, REFUSAL.noEndpoint);
    if (this.closing) return this.refuse(socket, REFUSAL.shuttingDown);
    const channel = parseChannelId(url.pathname.slice(kind === 'stream' ? STREAM_PATH_PREFIX.length : LISTEN_PATH_PREFIX.length));
    if (!channel) return this.refuse(socket, REFUSAL.unknownChannel);
    const sourceId = url.searchParams.get('source_id') ?? channel.side;
    if (kind === 'stream' && !SOURCE_ID_PATTERN.test(sourceId)) return this.refuse(socket, REFUSAL.badSourceId);

    const call = await this.deps.db<CallRow>('calls').where({ id: channel.callId }).first();
    if (!call) return this.refuse(socket, REFUSAL.unknownChannel);
    // A stream is opened by the channel's own side; a listener is the other side, hearing this channel.
    const side: Side = kind === 'stream' ? channel.side : otherSide(channel.side);
    const secret = kind === 'stream' ? url.searchParams.get('token') : url.searchParams.get('unlock');
    if (!verifyMediaSecret(call, side, kind, secret)) return this.refuse(socket, kind === 'stream' ? REFUSAL.badToken : REFUSAL.badUnlock);
    if (call.status !== 'open') return this.refuse(socket, REFUSAL.callEnded);
    if (!isReady(call)) return this.refuse(socket, REFUSAL.notReady);
    // A slot of the side's sockets of this kind, held until the socket closes, whichever way it ends.
    const releaseSlot = this.socketSlots.take(`${kind}:${call.id}:${side}`, this.settings.socketsPerSide);
    if (!releaseSlot) return this.refuse(socket, REFUSAL.tooManySockets);
    socket.once('close', releaseSlot);
    if (socket.destroyed) return releaseSlot();
    // Opening its media puts a side in the call: one that hung up and reconnects is back (call.joined).
    await markJoined(this.deps, call, side);
    if (this.closing) return this.refuse(socket, REFUSAL.shuttingDown);
    if (socket.destroyed) return;

    this.wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', (err) => this.log.debug({ err }, 'media: socket error'));
      if (this.closing) {
        ws.close(CLOSE.shuttingDown.code, CLOSE.shuttingDown.reason);
        return;
      }
      try {
        const room = this.roomFor(call);
        const conn = kind === 'stream' ? this.openStream(room, ws, side, sourceId) : this.openListen(room, ws, side);
        // The call may have changed between the check above and joining the room (a new link, the end):
        // events from now on reach the room, and a second read catches what happened before.
        this.track(this.revalidate(room, conn, kind, secret));
      } catch (err) {
        this.log.error({ err }, 'media: could not open the socket');
        ws.close(CLOSE.internal.code, CLOSE.internal.reason);
      }
    });
  }

  private refuse(socket: Duplex, refusal: Refusal): void {
    this.refusals[refusal.status] = (this.refusals[refusal.status] ?? 0) + 1;
    // A wrong token or unlock, or an unknown channel, is a guess: it counts against the address.
    const address = this.upgradeAddresses.get(socket);
    if ((refusal.status === 401 || refusal.status === 404) && address) this.track(this.deps.failedAttempts.record(address));
    if (socket.destroyed) return;
    const body = JSON.stringify({ detail: refusal.detail });
    const headers = Object.entries(refusal.headers ?? {}).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.once('finish', () => socket.destroy());
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_TEXT[refusal.status] ?? 'Error'}\r\n` +
        'Connection: close\r\n' +
        headers +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        '\r\n' +
        body,
    );
  }

  private async revalidate(room: CallRoom, conn: StreamConn | ListenConn, kind: 'stream' | 'listen', secret: string | null): Promise<void> {
    const row = await this.deps.db<CallRow>('calls').where({ id: room.id }).first();
    if (room.isDisposed || conn.isGone) return;
    if (!row || row.status !== 'open') return room.endCall();
    if (!verifyMediaSecret(row, conn.side, kind, secret)) {
      return conn.close(CLOSE.linkReplaced, kind === 'listen' ? notice(NOTICE.linkReplaced) : undefined);
    }
    if (!isJoined(row, conn.side)) return conn.close(CLOSE.left, kind === 'listen' ? notice(NOTICE.left) : undefined);
    room.refreshCall(row);
  }

  private roomFor(call: CallRow): CallRoom {
    let room = this.rooms.get(call.id);
    if (!room) {
      room = new CallRoom(call, {
        db: this.deps.db,
        events: this.deps.events,
        logger: this.log,
        settings: () => this.settings,
        track: (work) => this.track(work),
        onEmpty: (empty) => {
          if (this.rooms.get(empty.id) === empty) this.rooms.delete(empty.id);
          this.updateTicker();
        },
      });
      this.rooms.set(call.id, room);
      this.updateTicker();
    }
    return room;
  }

  private openStream(room: CallRoom, ws: WebSocket, side: Side, sourceId: string): StreamConn {
    const conn = new StreamConn(ws, side, sourceId);
    this.adopt(conn);
    ws.on('message', (data, isBinary) => {
      if (conn.isGone) return;
      if (!isBinary) return conn.close(CLOSE.textFrame);
      const frame = data as Buffer;
      if (frame.length > MAX_STREAM_FRAME_BYTES) return conn.close(CLOSE.tooBig);
      if (frame.length % 2 !== 0) return conn.close(CLOSE.oddLength);
      if (frame.length === 0) return;
      conn.framesReceived++;
      conn.bytesReceived += frame.length;
      this.totals.framesReceived++;
      this.totals.bytesReceived += frame.length;
      room.sourceAudio(side, conn.sourceKey, frame);
    });
    room.addStream(conn);
    return conn;
  }

  private openListen(room: CallRoom, ws: WebSocket, side: Side): ListenConn {
    const conn = new ListenConn(ws, side, () => this.settings.listenerBufferCapBytes);
    this.adopt(conn);
    // Whatever a listener sends is ignored.
    ws.on('message', () => {});
    room.addListener(conn);
    const gone = () => {
      this.totals.chunksSent += conn.chunksSent;
      this.totals.chunksDropped += conn.chunksDropped;
    };
    ws.once('close', gone);
    return conn;
  }

  /** Common socket wiring: heartbeat, errors, leaving the room when the socket closes. */
  private adopt(conn: StreamConn | ListenConn): void {
    const { ws } = conn;
    this.sockets.add(conn);
    ws.on('pong', () => {
      conn.alive = true;
    });
    ws.once('close', () => {
      this.sockets.delete(conn);
      conn.detach();
    });
  }

  // ---- phone lines -----------------------------------------------------------------------------

  /** A PBX connected with `lineId`: the side whose line it is, or why not. */
  async openLine(lineId: string, endpoint: LineEndpoint): Promise<{ session: LineSession } | { refused: LineRefusal }> {
    if (this.closing) return { refused: 'shutting_down' };
    const id = lineId.toLowerCase();
    const find = () =>
      this.deps.db<CallRow>('calls').where({ agent_line_id: id }).orWhere({ customer_line_id: id }).first();
    const call = await find();
    if (!call) return { refused: 'unknown_line' };
    if (call.status !== 'open') return { refused: 'call_ended' };
    if (!isReady(call)) return { refused: 'not_ready' };
    if (this.closing) return { refused: 'shutting_down' };
    const side: Side = lineOf(call, 'agent') === id ? 'agent' : 'customer';
    const room = this.roomFor(call);
    const conn = new LineConn(side, endpoint);
    room.addLine(conn);
    // As for sockets: a newer line or the end may have come between the read and joining the room.
    this.track(
      (async () => {
        const row = await this.deps.db<CallRow>('calls').where({ id: call.id }).first();
        if (room.isDisposed) return;
        if (!row || row.status !== 'open') return room.endCall();
        if (lineOf(row, side) !== id) return conn.hangup('line replaced');
        room.refreshCall(row);
      })(),
    );
    return {
      session: {
        callId: call.id,
        side,
        push: (pcm24k) => {
          if (!conn.isGone) room.sourceAudio(side, conn.sourceKey, pcm24k);
        },
        close: () => conn.detach(),
      },
    };
  }

  // ---- events and timers -----------------------------------------------------------------------

  private onEvent(event: BusEvent): void {
    if (!event.callId) return;
    const room = this.rooms.get(event.callId);
    if (!room) return;
    const data = (event.payload.data ?? {}) as Record<string, unknown>;
    try {
      room.handleEvent(event.payload.type, data);
    } catch (err) {
      this.log.error({ err, type: event.payload.type }, 'media: handling a call event failed');
    }
  }

  private updateTicker(): void {
    if (this.rooms.size && !this.ticker && !this.closing) {
      this.ticker = setInterval(() => {
        const now = Date.now();
        for (const room of this.rooms.values()) room.tick(now);
      }, TICK_MS);
      this.ticker.unref();
    } else if (!this.rooms.size && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = null;
    }
  }

  private startHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      for (const conn of this.sockets) {
        if (!conn.alive) {
          conn.ws.terminate();
          continue;
        }
        conn.alive = false;
        conn.ws.ping();
      }
    }, this.settings.heartbeatMs);
    this.heartbeat.unref();
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch((err) => this.log.error({ err }, 'media: background work failed'));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  stats(): MediaStats {
    const stats: MediaStats = {
      rooms: this.rooms.size,
      streams: 0,
      listeners: 0,
      lines: 0,
      ...this.totals,
      refusals: { ...this.refusals },
      sockets: this.sockets.size,
    };
    for (const room of this.rooms.values()) {
      const roomStats = room.stats();
      stats.streams += roomStats.streams;
      stats.listeners += roomStats.listeners;
      stats.lines += roomStats.lines;
      stats.chunksSent += roomStats.chunksSent;
      stats.chunksDropped += roomStats.chunksDropped;
    }
    return stats;
  }

  /** The room of a call, for tests and diagnostics. */
  room(callId: string): CallRoom | undefined {
    return this.rooms.get(callId);
  }

  /**
   * Shutdown: refuse new upgrades, close every socket (1001) and hang up every line, stop the
   * interpreters, charge what they used, and wait (bounded) for all of it.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.unsubscribe();
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    const open = [...this.sockets].map((conn) => conn.ws);
    for (const room of [...this.rooms.values()]) room.closeEverything(CLOSE.shuttingDown, null, 'server shutting down');
    this.rooms.clear();
    for (const ws of open) if (ws.readyState === WebSocket.OPEN) ws.close(CLOSE.shuttingDown.code, CLOSE.shuttingDown.reason);
    await waitFor(() => open.every((ws) => ws.readyState === WebSocket.CLOSED), SOCKET_CLOSE_GRACE_MS);
    for (const ws of open) if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
    // Pending work may add more (a charge after an interpreter closed): drain until quiet.
    const deadline = Date.now() + 10_000;
    while (this.pending.size && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.pending]), sleep(Math.max(0, deadline - Date.now()))]);
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

async function waitFor(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await sleep(20);
}

export function createMediaPlane(deps: MediaDeps, options?: MediaPlaneOptions): MediaPlane {
  return new MediaPlane(deps, options);
}
