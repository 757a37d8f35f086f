// The AudioSocket transport: a TCP server where a PBX line (Asterisk `AudioSocket(<line id>,<host>:<port>)`)
// connects to play one side of a call. Connections: ./line.ts; admission: ./admission.ts; protocol:
// ./protocol.ts. One pacer sends every line's audio in real time.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { FailedAttempts } from '../../../../ratelimit/failedAttempts.js';
import { lineOf } from '../../../calls.js';
import type { MediaPlane, Transport } from '../../plane.js';
import { admitLine, type LineAdmission } from './admission.js';
import { AudioSocketConnection, CLOSE_GRACE_MS, type AdmittedLine, type LineHost } from './line.js';
import { LINE_ERROR, errorMessage } from './protocol.js';

export interface AudioSocketServer extends Transport {
  /** The bound port; null when the server could not listen (the error was logged). */
  port: number | null;
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

/** Listens for PBX lines; a port already taken is logged and leaves phone lines unavailable. */
export async function startAudioSocketServer(media: MediaPlane, options: AudioSocketOptions): Promise<AudioSocketServer> {
  const log = options.logger.child({ component: 'audiosocket' });
  const connections = new Set<AudioSocketConnection>();
  let pacer: NodeJS.Timeout | null = null;
  let closing = false;
  const totals = { lineFramesSent: 0, lineFramesDropped: 0 };

  const host: LineHost = {
    log,
    uuidTimeoutMs: options.uuidTimeoutMs,
    idleTimeoutMs: options.idleTimeoutMs,
    async admit(connection) {
      const ctx: LineAdmission = {
        db: media.deps.db,
        closing: () => media.closing,
        lineId: connection.lineId,
        address: connection.socket.remoteAddress ?? 'unknown',
        failedAttempts: options.failedAttempts,
      };
      const admitted = await admitLine(ctx);
      if ('refused' in admitted) return admitted;
      const call = ctx.call!;
      const lineId = connection.lineId.toLowerCase();
      return {
        callId: call.id,
        side: admitted.side,
        // As for sockets: a newer line or the end may have come between the read and joining the room.
        enter: (line) => media.enter(call, line, (row) => (lineOf(row, admitted.side) === lineId ? null : 'line_replaced')).audio,
      } satisfies AdmittedLine;
    },
    closed(connection) {
      totals.lineFramesSent += connection.framesSent;
      totals.lineFramesDropped += connection.framesDropped;
      connections.delete(connection);
      if (pacer && !connections.size) {
        clearInterval(pacer);
        pacer = null;
      }
    },
  };

  const server = net.createServer((socket) => {
    if (closing) {
      socket.on('error', (err) => log.debug({ err }, 'audiosocket: connection error'));
      socket.end(errorMessage(LINE_ERROR.shuttingDown));
      return;
    }
    connections.add(new AudioSocketConnection(socket, host));
    pacer ??= setInterval(() => {
      const now = Date.now();
      for (const connection of connections) connection.pump(now);
    }, PACE_TICK_MS);
    pacer.unref();
  });

  const stats = () => {
    let { lineFramesSent, lineFramesDropped } = totals;
    for (const connection of connections) {
      lineFramesSent += connection.framesSent;
      lineFramesDropped += connection.framesDropped;
    }
    return { audioSocketConnections: connections.size, lineFramesSent, lineFramesDropped };
  };

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
    return { port: null, stats, close: async () => {} };
  }
  server.on('error', (err) => log.error({ err }, 'audiosocket: server error'));
  const port = (server.address() as AddressInfo).port;
  log.debug({ port }, 'audiosocket: listening');

  const transport: AudioSocketServer = {
    port,
    stats,
    async close() {
      if (closing) return;
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of connections) connection.hangup('server shutting down');
      const deadline = Date.now() + CLOSE_GRACE_MS;
      while (connections.size && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const connection of connections) connection.socket.destroy();
      await closed;
      if (pacer) clearInterval(pacer);
      pacer = null;
    },
  };
  media.addTransport(transport);
  return transport;
}
