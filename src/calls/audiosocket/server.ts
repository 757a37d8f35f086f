// The AudioSocket TCP server: a PBX line (Asterisk `AudioSocket(<line id>,<host>:<port>)`) plays one
// side of a call through the media plane. Protocol and behaviour: ./protocol.ts.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { fingerprint } from '../../logging/redact.js';
import type { FailedAttempts } from '../../ratelimit/failedAttempts.js';
import type { LineEndpoint } from '../media/connections.js';
import { Downsampler24kTo8k, Upsampler8kTo24k } from '../media/pcm.js';
import type { LineRefusal, LineSession, MediaPlane } from '../media/plane.js';
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

export interface AudioSocketServer {
  /** The bound port; null when the server could not listen (the error was logged). */
  port: number | null;
  stats(): { lines: number; framesSent: number; framesDropped: number };
  close(): Promise<void>;
}

export interface AudioSocketOptions {
  host: string;
  port: number;
  logger: Logger;
  /** Unknown line ids count per PBX address; an address over the limit is refused unchecked. */
  failedAttempts: FailedAttempts;
  /** A connection must send its UUID within this time. */
  uuidTimeoutMs: number;
  /** A joined line that sends no message for this long is hung up (a PBX sends audio every 20 ms). */
  idleTimeoutMs: number;
}

const PACE_TICK_MS = 10;
/** What may wait to be played to a line: 5 s of 8 kHz audio (interpreters can answer in bursts). */
const MAX_QUEUED_BYTES = 5 * 16_000;
/** Unsent bytes in the TCP socket beyond which frames are dropped (the PBX is not reading). */
const MAX_SOCKET_BACKLOG_BYTES = 64 * 1024;
/** A partial last frame is padded with silence once no more audio came for this long. */
const TAIL_WAIT_MS = 2 * FRAME_MS;
const CLOSE_GRACE_MS = 2_000;

const REFUSAL_CODES: Record<LineRefusal, number> = {
  unknown_line: LINE_ERROR.unknownLine,
  call_ended: LINE_ERROR.callEnded,
  not_ready: LINE_ERROR.notReady,
  shutting_down: LINE_ERROR.shuttingDown,
};

class AudioSocketLine implements LineEndpoint {
  /** The line id is a secret (whoever knows it plays the side): logs name it by fingerprint only. */
  lineId = '';
  private state: 'awaiting_uuid' | 'validating' | 'active' | 'closed' = 'awaiting_uuid';
  private readonly reader = new MessageReader();
  private readonly upsampler = new Upsampler8kTo24k();
  private readonly downsampler = new Downsampler24kTo8k();
  private session: LineSession | null = null;
  private queue: Buffer = Buffer.alloc(0);
  private nextSendAt = 0;
  private lastPlayAt = 0;
  private readonly uuidTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | null = null;
  framesSent = 0;
  framesDropped = 0;

  constructor(
    readonly socket: net.Socket,
    private readonly media: MediaPlane,
    private readonly failedAttempts: FailedAttempts,
    private readonly log: Logger,
    uuidTimeoutMs: number,
    private readonly idleTimeoutMs: number,
    private readonly onClosed: (line: AudioSocketLine) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (data) => this.receive(data));
    socket.on('error', (err) => this.log.debug({ err }, 'audiosocket: connection error'));
    socket.on('close', () => this.closed());
    this.uuidTimer = setTimeout(() => {
      if (this.state === 'awaiting_uuid') this.refuse(LINE_ERROR.badFirstMessage, 'no UUID within the time allowed');
    }, uuidTimeoutMs);
    this.uuidTimer.unref();
  }

  /** How logs name the line: a fingerprint of its id, never the id. */
  private get lineRef(): string | null {
    return this.lineId ? fingerprint(this.lineId) : null;
  }

  get isClosed(): boolean {
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
        if (this.state === 'active' && this.session && payload.length) this.session.push(this.upsampler.process(payload));
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
      const address = this.socket.remoteAddress ?? 'unknown';
      if (await this.failedAttempts.retryAfter(address)) {
        this.refuse(LINE_ERROR.tooManyFailedAttempts, 'too many unknown line ids from this address');
        return;
      }
      const result = await this.media.openLine(this.lineId, this);
      if ('refused' in result) {
        if (result.refused === 'unknown_line') await this.failedAttempts.record(address);
        this.refuse(REFUSAL_CODES[result.refused], result.refused);
        return;
      }
      if (this.state !== 'validating') {
        // The PBX went away while the line was being checked.
        result.session.close();
        return;
      }
      this.session = result.session;
      this.state = 'active';
      this.idleTimer = setTimeout(() => this.hangUpIdle(), this.idleTimeoutMs);
      this.idleTimer.unref();
      this.log.info({ line: this.lineRef, call_id: result.session.callId, side: result.session.side }, 'audiosocket: line joined');
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

  // ---- LineEndpoint: called by the media plane ----

  play(pcm24k: Buffer): void {
    if (this.state !== 'active') return;
    const pcm8k = this.downsampler.process(pcm24k);
    if (!pcm8k.length) return;
    this.lastPlayAt = Date.now();
    let queue = this.queue.length ? Buffer.concat([this.queue, pcm8k]) : pcm8k;
    if (queue.length > MAX_QUEUED_BYTES) {
      // Keep the newest audio; drop whole frames from the front.
      const excess = queue.length - MAX_QUEUED_BYTES;
      const drop = Math.ceil(excess / FRAME_BYTES) * FRAME_BYTES;
      this.framesDropped += drop / FRAME_BYTES;
      queue = queue.subarray(Math.min(drop, queue.length));
    }
    this.queue = queue;
  }

  hangup(reason: string): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.state === 'closed') return;
    this.log.info({ line: this.lineRef, reason }, 'audiosocket: hanging up');
    this.state = 'closed';
    this.session = null;
    this.socket.end(hangupMessage());
    this.destroyLater();
  }

  /** A line that went quiet: the PBX is gone without saying so. Leaves the room, then hangs up. */
  private hangUpIdle(): void {
    this.session?.close();
    this.hangup(`no message for ${this.idleTimeoutMs} ms`);
  }

  /** Sends what is due: one 320-byte frame per 20 ms of wall time, never an empty frame. */
  pump(now: number): void {
    if (this.state !== 'active' || !this.queue.length) return;
    // Idle, or the timer fell behind: restart the clock rather than send a burst.
    if (this.nextSendAt < now - 3 * FRAME_MS) this.nextSendAt = now;
    while (this.queue.length && this.nextSendAt <= now) {
      let frame: Buffer;
      if (this.queue.length >= FRAME_BYTES) {
        frame = this.queue.subarray(0, FRAME_BYTES);
        this.queue = this.queue.subarray(FRAME_BYTES);
      } else {
        if (now - this.lastPlayAt < TAIL_WAIT_MS) return;
        frame = Buffer.alloc(FRAME_BYTES);
        this.queue.copy(frame);
        this.queue = Buffer.alloc(0);
      }
      if (this.socket.writableLength > MAX_SOCKET_BACKLOG_BYTES) this.framesDropped++;
      else {
        this.socket.write(audioMessage(frame));
        this.framesSent++;
      }
      this.nextSendAt += FRAME_MS;
    }
  }

  private end(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.session?.close();
    this.session = null;
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
    this.session?.close();
    this.session = null;
    this.onClosed(this);
  }
}

/** Listens for PBX lines; a port already taken is logged and leaves phone lines unavailable. */
export async function startAudioSocketServer(media: MediaPlane, options: AudioSocketOptions): Promise<AudioSocketServer> {
  const log = options.logger.child({ component: 'audiosocket' });
  const lines = new Set<AudioSocketLine>();
  let pacer: NodeJS.Timeout | null = null;
  let closing = false;
  const totals = { framesSent: 0, framesDropped: 0 };

  const startPacer = () => {
    if (pacer) return;
    pacer = setInterval(() => {
      const now = Date.now();
      for (const line of lines) line.pump(now);
    }, PACE_TICK_MS);
    pacer.unref();
  };
  const stopPacerIfIdle = () => {
    if (pacer && !lines.size) {
      clearInterval(pacer);
      pacer = null;
    }
  };

  const server = net.createServer((socket) => {
    if (closing) {
      socket.on('error', (err) => log.debug({ err }, 'audiosocket: connection error'));
      socket.end(errorMessage(LINE_ERROR.shuttingDown));
      return;
    }
    const line = new AudioSocketLine(socket, media, options.failedAttempts, log, options.uuidTimeoutMs, options.idleTimeoutMs, (closed) => {
      totals.framesSent += closed.framesSent;
      totals.framesDropped += closed.framesDropped;
      lines.delete(closed);
      stopPacerIfIdle();
    });
    lines.add(line);
    startPacer();
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw err;
    log.error({ err, port: options.port }, `AudioSocket port ${options.port} is not available (${code}): phone lines are disabled; set AUDIOSOCKET_PORT`);
    return { port: null, stats: () => ({ lines: 0, ...totals }), close: async () => {} };
  }
  server.on('error', (err) => log.error({ err }, 'audiosocket: server error'));
  const port = (server.address() as AddressInfo).port;
  log.debug({ port }, 'audiosocket: listening');

  return {
    port,
    stats() {
      let framesSent = totals.framesSent;
      let framesDropped = totals.framesDropped;
      for (const line of lines) {
        framesSent += line.framesSent;
        framesDropped += line.framesDropped;
      }
      return { lines: lines.size, framesSent, framesDropped };
    },
    async close() {
      if (closing) return;
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const line of lines) line.hangup('server shutting down');
      const deadline = Date.now() + CLOSE_GRACE_MS;
      while (lines.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const line of lines) line.socket.destroy();
      await closed;
      if (pacer) clearInterval(pacer);
      pacer = null;
    },
  };
}
