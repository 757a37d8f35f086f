// A webhook receiver for tests: a real HTTP server that records what it is sent and answers with the
// statuses it is told, and the receiver's signature check.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** An HTTP server that records what it is sent and answers with the statuses it is told (200 when none). */
export class Receiver {
  readonly received: Received[] = [];
  statuses: number[] = [];
  private waiting: Array<{ count: number; resolve: () => void }> = [];
  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<Receiver> {
    const server = http.createServer();
    const receiver = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        receiver.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(receiver.statuses.shift() ?? 200).end('ok');
        receiver.waiting = receiver.waiting.filter((w) => (receiver.received.length >= w.count ? (w.resolve(), false) : true));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** Resolves once `count` requests have arrived in all. */
  until(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ count, resolve }));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The receiver's check, written from the README alone. */
export function verify(secret: string, received: Received, nowSeconds: number): { t: number; ok: boolean } {
  const header = String(received.headers['webhook-signature']);
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  const t = Number(parts.t);
  const expected = createHmac('sha256', secret).update(`${parts.t}.${received.body}`).digest();
  const given = Buffer.from(parts.v1 ?? '', 'hex');
  const ok = given.length === expected.length && timingSafeEqual(given, expected) && Math.abs(nowSeconds - t) <= 300;
  return { t, ok };
}
