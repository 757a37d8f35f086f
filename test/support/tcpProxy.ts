// A TCP proxy in front of a server (PostgreSQL) that a test can pause (bytes stop flowing, connections
// stay open: a stalled server), kill (every connection reset, nothing listening: an outage) and bring back.
import net from 'node:net';

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<{ client: net.Socket; upstream: net.Socket | undefined }>();
  private paused = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  /** Listens (again) on the same port as before, or on a free one the first time. */
  async start(): Promise<number> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  /** Stops forwarding in both directions; new connections are accepted and left waiting. */
  pause(): void {
    this.paused = true;
    for (const { client, upstream } of this.pairs) {
      client.unpipe();
      upstream?.unpipe();
      client.pause();
      upstream?.pause();
    }
  }

  resume(): void {
    this.paused = false;
    for (const pair of this.pairs) {
      if (!pair.upstream) pair.upstream = this.connectUpstream(pair.client);
      else flow(pair.client, pair.upstream);
    }
  }

  /** Resets every connection and stops listening: the server is gone. */
  async kill(): Promise<void> {
    for (const { client, upstream } of this.pairs) {
      client.resetAndDestroy();
      upstream?.resetAndDestroy();
    }
    this.pairs.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    const pair: { client: net.Socket; upstream: net.Socket | undefined } = { client, upstream: undefined };
    this.pairs.add(pair);
    client.on('error', () => undefined);
    client.on('close', () => {
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    });
    if (this.paused) client.pause();
    else pair.upstream = this.connectUpstream(client);
  }

  private connectUpstream(client: net.Socket): net.Socket {
    const upstream = net.connect(this.target.port, this.target.host);
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    flow(client, upstream);
    return upstream;
  }
}

function flow(client: net.Socket, upstream: net.Socket): void {
  client.pipe(upstream);
  upstream.pipe(client);
}
