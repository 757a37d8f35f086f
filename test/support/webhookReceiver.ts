// A webhook receiver for tests: a real HTTP server that records what it is sent and answers with the
// statuses it is told (or, while holding, accepts and never answers), and the receiver's signature check.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  /** The request's path and query. */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** An HTTP server that records what it is sent and answers with the statuses it is told (200 when none). */
export class Receiver {
  readonly received: Received[] = [];
  statuses: number[] = [];
  /** While true, requests are recorded and left open without an answer until `release`. */
  holding = false;
  /** Requests whose connection closed before they were answered (the sender gave up or went away). */
  abandoned = 0;
  private held: http.ServerResponse[] = [];
  private waiting: Array<{ done: () => boolean; resolve: () => void }> = [];
  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<Receiver> {
    const server = http.createServer();
    const receiver = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        receiver.received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        if (receiver.holding) {
          receiver.held.push(res);
          res.on('close', () => {
            if (res.writableEnded) return;
            receiver.abandoned++;
            receiver.wake();
          });
        } else {
          res.writeHead(receiver.statuses.shift() ?? 200).end('ok');
        }
        receiver.wake();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** Requests held open right now, unanswered. */
  get open(): number {
    return this.held.filter((res) => !res.writableEnded && !res.destroyed).length;
  }

  /** Resolves once `count` requests have arrived in all. */
  until(count: number): Promise<void> {
    return this.waitFor(() => this.received.length >= count);
  }

  /** Resolves once `count` held requests have been closed unanswered by their sender. */
  untilAbandoned(count: number): Promise<void> {
    return this.waitFor(() => this.abandoned >= count);
  }

  private waitFor(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ done, resolve }));
  }

  private wake(): void {
    this.waiting = this.waiting.filter((waiter) => (waiter.done() ? (waiter.resolve(), false) : true));
  }

  /** Answers every held request with `status` and stops holding. */
  release(status = 200): void {
    this.holding = false;
    for (const res of this.held.splice(0)) if (!res.destroyed) res.writeHead(status).end('ok');
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** `t` and every `v1` of a Webhook-Signature header, in order. */
export function signatureParts(received: Received): { t: number; v1: string[] } {
  const parts = String(received.headers['webhook-signature'])
    .split(',')
    .map((part) => part.split('=') as [string, string]);
  return { t: Number(parts.find(([key]) => key === 't')?.[1]), v1: parts.filter(([key]) => key === 'v1').map(([, value]) => value) };
}

/** The hex signature `secret` makes of `body` sent at `t`. */
export const expectedSignature = (secret: string, t: number, body: string) => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

/** The receiver's check, written from docs/webhooks.md alone: some v1 is the secret's signature, and t is recent. */
export function verify(secret: string, received: Received, nowSeconds: number): { t: number; ok: boolean } {
  const { t, v1 } = signatureParts(received);
  const expected = Buffer.from(expectedSignature(secret, t, received.body), 'hex');
  const matches = v1.map((hex) => Buffer.from(hex, 'hex')).filter((given) => given.length === expected.length && timingSafeEqual(given, expected));
  return { t, ok: matches.length > 0 && Math.abs(nowSeconds - t) <= 300 };
}
