// Revocations across instances that share one PostgreSQL database: an announcement is delivered here at
// once and sent with NOTIFY; every instance LISTENs on a connection of its own (a pooled one would be
// handed to other queries) and delivers what it hears to its own watchers. While that connection is down
// the bus is not hearing (the credential cache stops answering from memory and is emptied), and it
// reconnects with backoff. Our own announcements come back to us too; watchers are one-shot and the
// cache's forgetting is idempotent, so hearing one twice is harmless.
import type { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from 'pino';
import { backoffDelay } from '../upstream/backoff.js';
import { LocalRevocationBus } from './revocation.js';

export const REVOCATION_CHANNEL = 'credential_revoked';

const RECONNECT_BACKOFF = { initialDelayMs: 100, maxDelayMs: 5_000 };

export interface PostgresRevocationBusOptions {
  databaseUrl: string;
  /** Sends the NOTIFY (through the pool: the listening connection may be down when a key is revoked). */
  db: Knex;
  logger: Logger;
  connectTimeoutMs: number;
}

export class PostgresRevocationBus extends LocalRevocationBus {
  private client: pg.Client | undefined;
  private listening = false;
  private closed = false;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;

  private constructor(private readonly options: PostgresRevocationBusOptions) {
    super((err) => options.logger.error({ err }, 'revocation: a watcher failed'));
  }

  /** Starts listening; resolves once it hears (or rejects when the first connection fails). */
  static async start(options: PostgresRevocationBusOptions): Promise<PostgresRevocationBus> {
    const bus = new PostgresRevocationBus(options);
    await bus.connect();
    return bus;
  }

  override async announce(credentialId: string): Promise<void> {
    this.deliver(credentialId);
    try {
      await this.options.db.raw('select pg_notify(?, ?)', [REVOCATION_CHANNEL, credentialId]);
    } catch (err) {
      // The revocation itself has committed: other instances' caches drop it at their TTL at the latest.
      this.options.logger.error({ err, credentialId }, 'revocation: telling the other instances failed');
    }
  }

  override hearing(): boolean {
    return this.listening;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.databaseUrl,
      connectionTimeoutMillis: this.options.connectTimeoutMs,
      keepAlive: true,
    });
    this.client = client;
    client.on('notification', (message) => {
      if (message.channel === REVOCATION_CHANNEL && message.payload) this.deliver(message.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, undefined));
    try {
      await client.connect();
      await client.query(`LISTEN ${REVOCATION_CHANNEL}`);
    } catch (err) {
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed || this.client !== client) return;
    this.attempt = 0;
    this.listening = true;
  }

  /** The listening connection failed: stop trusting what was learned, and connect again. */
  private lost(client: pg.Client, err: Error | undefined): void {
    if (this.client !== client) return;
    this.client = undefined;
    const wasListening = this.listening;
    this.listening = false;
    if (this.closed) return;
    if (wasListening) {
      this.options.logger.warn({ err }, 'revocation: lost the listening connection; reconnecting');
      this.deliverGap();
    }
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    clearTimeout(this.retryTimer);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => {
      this.connect().catch((err) => {
        this.options.logger.warn({ err }, 'revocation: reconnecting the listening connection failed');
        if (!this.closed && !this.client) this.scheduleReconnect();
      });
    }, backoffDelay(this.attempt, RECONNECT_BACKOFF));
    this.retryTimer.unref();
  }
}
