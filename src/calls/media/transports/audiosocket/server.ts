// The AudioSocket transport: a TCP server of its own where a PBX line (Asterisk
// `AudioSocket(<line id>,<host>:<port>)`) connects to play one side of a call. Lines: ./line.ts, on the
// shared phone-line base (../phone/); admission: ./admission.ts; protocol: ./protocol.ts.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { GaugeMetric } from '../../../../observability/metrics.js';
import { lineOf } from '../../../calls.js';
import type { Refused } from '../../admission.js';
import type { MediaPlane } from '../../plane.js';
import type { MediaTransport, TransportContext, TransportFactory } from '../../transport.js';
import type { AdmittedLine } from '../phone/line.js';
import { PhoneLines } from '../phone/lines.js';
import { admitLine, type LineAdmission } from './admission.js';
import { AudioSocketLine } from './line.js';
import { LINE_ERROR, errorMessage } from './protocol.js';

export class AudioSocketTransport implements MediaTransport {
  readonly name = 'audiosocket';
  readonly metrics: readonly GaugeMetric[];
  private readonly lines: PhoneLines;
  private readonly log: Logger;
  private server: net.Server | null = null;
  private closing = false;

  constructor(
    private readonly plane: MediaPlane,
    private readonly app: TransportContext['app'],
  ) {
    this.log = app.logger.child({ component: 'audiosocket' });
    const { connections } = app.config;
    this.lines = new PhoneLines(this.name, plane, this.log, {
      firstMessageTimeoutMs: connections.audioSocketUuidTimeoutMs,
      idleTimeoutMs: connections.audioSocketIdleTimeoutMs,
    });
    this.metrics = [
      { name: 'audiosocket_connections_open', help: 'AudioSocket connections (PBX lines) open on this instance', read: () => this.lines.size },
      { name: 'media_line_frames_dropped', help: 'Frames dropped for AudioSocket lines since start', read: () => this.lines.counters().framesDropped },
    ];
  }

  /** Listens for PBX lines; a port already taken is logged and leaves phone lines unavailable. */
  async listen(): Promise<number | null> {
    const { host, audioSocketPort: port } = this.app.config;
    const server = net.createServer((socket) => this.connected(socket));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EADDRINUSE' && code !== 'EACCES') throw err;
      this.log.error({ err, port }, `AudioSocket port ${port} is not available (${code}): phone lines are disabled; set AUDIOSOCKET_PORT`);
      return null;
    }
    server.on('error', (err) => this.log.error({ err }, 'audiosocket: server error'));
    this.server = server;
    const bound = (server.address() as AddressInfo).port;
    // Phone-line answers name the port really bound (AUDIOSOCKET_PORT=0 picks a free one).
    this.app.audioSocketPort = bound;
    this.log.debug({ port: bound }, 'audiosocket: listening');
    return bound;
  }

  private connected(socket: net.Socket): void {
    if (this.closing) {
      socket.on('error', (err) => this.log.debug({ err }, 'audiosocket: connection error'));
      socket.end(errorMessage(LINE_ERROR.shuttingDown));
      return;
    }
    this.lines.add(new AudioSocketLine(socket, this.lines, (line) => this.admit(line)));
  }

  private async admit(line: AudioSocketLine): Promise<AdmittedLine | Refused> {
    const ctx: LineAdmission = {
      db: this.app.db,
      calls: this.plane.deps.calls,
      closing: () => this.plane.closing,
      lineId: line.lineId,
      address: line.socket.remoteAddress ?? 'unknown',
      failedAttempts: this.app.failedAttempts,
    };
    const admitted = await admitLine(ctx);
    if ('refused' in admitted) return admitted;
    const { side } = admitted;
    const lineId = line.lineId.toLowerCase();
    return {
      call: ctx.call!,
      side,
      credential: 'line',
      sourceKey: `line:${line.lineRef}`,
      // As for sockets: a newer line or the end may have come between the read and joining the room.
      recheck: (row) => (lineOf(row, side) === lineId ? null : 'line_replaced'),
    };
  }

  stats() {
    return { connections: this.lines.size, ...this.lines.counters() };
  }

  openConnections(): number {
    return this.lines.size;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const server = this.server;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    await this.lines.close();
    await closed;
  }
}

export const audioSocketTransport: TransportFactory = ({ plane, app }) => new AudioSocketTransport(plane, app);
