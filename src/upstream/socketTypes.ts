// What a ReconnectingSocket is told (options) and tells its owner (status, failures, handlers).

import type { Backoff } from './backoff.js';
import type { OpenTransport } from './transport.js';

export type UpstreamLogLevel = 'debug' | 'info' | 'warn' | 'error';
/** Optional log sink, e.g. `(level, msg, details) => logger[level](details ?? {}, msg)` for pino. */
export type UpstreamLogger = (level: UpstreamLogLevel, message: string, details?: Record<string, unknown>) => void;

export interface ReconnectOptions extends Backoff {
  /** Reconnect attempts in a row (after a loss, or after a failed first connect) before `failed`. */
  maxAttempts: number;
}

export interface ReconnectingSocketOptions {
  /** Prefix of log messages (`<name>: upstream connection ended`). */
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** The upgrade plus the owner's setup handshake (until ready()) must finish within this. */
  setupTimeoutMs: number;
  reconnect: ReconnectOptions;
  /** Streamed messages kept while no session is up (the newest are kept). */
  maxQueued: number;
  /** Streamed messages are dropped while the send buffer holds more than this many bytes. */
  maxBufferedBytes: number;
  /** close() waits this long for the upstream to flush and close before terminating. */
  closeTimeoutMs: number;
  /** Reason sent with an orderly close frame. */
  closeReason: string;
  /** HTTP statuses at the upgrade that end the socket at once, without retrying. Default 401, 403. */
  fatalStatuses?: readonly number[];
  logger?: UpstreamLogger;
  /** Default: a `ws` WebSocket without compression. */
  openTransport?: OpenTransport;
}

export type UpstreamFailure =
  /** The socket could not even be created (e.g. an unusable URL). */
  | { reason: 'cannot_open'; problem: string }
  /** The upgrade was answered with one of `fatalStatuses`. */
  | { reason: 'refused'; status: number }
  /** The owner marked the connection fatal (markFatal) and it ended. */
  | { reason: 'rejected'; problem: string }
  /** `attempts` reconnect attempts in a row did not bring a session up. */
  | { reason: 'gave_up'; attempts: number; problem: string };

export type UpstreamStatus =
  | { state: 'connected' }
  | { state: 'reconnecting'; problem: string }
  | { state: 'failed'; failure: UpstreamFailure };

export interface UpstreamHandlers {
  /** A connection opened: send the setup handshake, and call ready() once the upstream confirms it. */
  onOpen(): void;
  onMessage(data: Buffer, isBinary: boolean): void;
  /** The connection in use ended unexpectedly (before a reconnect or failure is decided). */
  onConnectionLost(): void;
  onStatus(status: UpstreamStatus): void;
}

/** A farewell for close(): sent only while a session is up. */
export interface Farewell {
  messages: Array<string | Buffer>;
  /** The last message asks the upstream to flush and close (wait for it); otherwise close after sending. */
  upstreamCloses: boolean;
}

export type SocketState = 'idle' | 'connecting' | 'connected' | 'waiting' | 'failed' | 'closed';

