// A WebSocket to an upstream service that stays up: it connects with a setup handshake and a timeout,
// reconnects with exponential backoff, keeps a bounded queue of streamed messages while it is down,
// drops streamed messages while the upstream reads too slowly, and closes in order. It knows nothing of
// the messages it carries: its owner sends the handshake, parses what arrives and says when the
// session is up (`ready()`).
//
// Status, reported to the owner: `connected` once the owner calls ready() (again after every
// reconnect); `reconnecting` once per outage (an unexpected close, an error or the setup timeout);
// `failed` (final) on a fatal HTTP status at the upgrade, when the owner marked the connection fatal
// (markFatal) and it ended, when the socket cannot be opened at all, or after `maxAttempts` reconnect
// attempts in a row that did not bring a session up. Nothing here throws into the owner, and a
// throwing owner handler is logged, never propagated.

import type { IncomingMessage } from 'node:http';
import { WebSocket, type RawData } from 'ws';
import { backoffDelay } from './backoff.js';
import { BoundedQueue } from './boundedQueue.js';
import { errorMessage } from './failureText.js';
import type {
  Farewell,
  ReconnectingSocketOptions,
  SocketState,
  UpstreamFailure,
  UpstreamHandlers,
  UpstreamLogger,
  UpstreamStatus,
} from './socketTypes.js';
import { openWebSocket, safely, toBuffer, type OpenTransport, type UpstreamTransport } from './transport.js';

const DEFAULT_FATAL_STATUSES = [401, 403];

export class ReconnectingSocket {
  private phase: SocketState = 'idle';
  private transport: UpstreamTransport | null = null;
  private readonly log: UpstreamLogger;
  private readonly openTransport: OpenTransport;
  private readonly fatalStatuses: readonly number[];
  /** Reconnect attempts made in the current outage. */
  private attempts = 0;
  /** `reconnecting` was reported for the current outage. */
  private outage = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private setupTimer: NodeJS.Timeout | null = null;
  /** Why the current connection ended, as far as known. */
  private upgradeStatus: number | null = null;
  private problem: string | null = null;
  private fatalProblem: string | null = null;
  /** The last error the upstream reported on the current connection (named in the setup-timeout problem). */
  private lastUpstreamError: string | null = null;
  private readonly queue: BoundedQueue<string | Buffer>;
  private droppedBackpressure = 0;
  private closing: Promise<void> | null = null;
  private closeDone: (() => void) | null = null;

  constructor(
    private readonly options: ReconnectingSocketOptions,
    private readonly handlers: UpstreamHandlers,
  ) {
    const logger = options.logger;
    this.log = (level, message, details) => {
      if (!logger) return;
      try {
        logger(level, `${options.name}: ${message}`, details);
      } catch {
        // A broken logger must not break the connection.
      }
    };
    this.openTransport = options.openTransport ?? openWebSocket;
    this.fatalStatuses = options.fatalStatuses ?? DEFAULT_FATAL_STATUSES;
    this.queue = new BoundedQueue(options.maxQueued);
  }

  get state(): SocketState {
    return this.phase;
  }

  /** Opens the first connection. */
  start(): void {
    if (this.phase === 'idle') this.connect();
  }

  /** The owner's setup handshake succeeded: the session is up, queued messages go out. */
  ready(): void {
    if (this.phase !== 'connecting') return;
    this.phase = 'connected';
    this.clearTimer('setup');
    this.attempts = 0;
    this.outage = false;
    const dropped = this.queue.takeDropped();
    if (dropped) this.log('info', 'messages dropped while the upstream was down', { dropped });
    this.log('info', 'session up');
    this.report({ state: 'connected' });
    for (const message of this.queue.takeAll()) {
      if (this.phase !== 'connected') break;
      this.transmit(message);
    }
  }

  /** A control message (handshake, requests): sent if a connection is open, otherwise dropped. */
  send(message: string | Buffer): void {
    const transport = this.transport;
    if (!transport || transport.readyState !== WebSocket.OPEN) return;
    try {
      transport.send(message, (err) => {
        if (err) this.log('debug', 'send failed', { err: err.message });
      });
    } catch (err) {
      this.log('debug', 'send failed', { err: errorMessage(err) });
    }
  }

  /**
   * A streamed message (audio): sent while a session is up, queued (bounded, newest kept) while none
   * is, dropped while the upstream reads too slowly.
   */
  stream(message: string | Buffer): void {
    if (this.phase === 'failed' || this.phase === 'closed') return;
    if (this.phase === 'connected') this.transmit(message);
    else this.queue.push(message);
  }

  /** The upstream reported an error on this connection; the setup-timeout problem names it. */
  noteUpstreamError(detail: string): void {
    this.lastUpstreamError = detail;
  }

  /** The upstream refused us for good (e.g. credentials): when this connection ends, fail with `problem`. */
  markFatal(problem: string): void {
    this.fatalProblem = problem;
  }

  /** Stops for good: sends the farewell if a session is up, then closes (terminates after closeTimeoutMs). */
  close(farewell?: Farewell): Promise<void> {
    if (this.closing) return this.closing;
    const wasConnected = this.phase === 'connected';
    this.phase = 'closed';
    this.clearTimer('retry');
    this.clearTimer('setup');
    this.queue.clear();
    const transport = this.transport;
    if (!transport || transport.readyState === WebSocket.CLOSED) {
      this.transport = null;
      this.closing = Promise.resolve();
      return this.closing;
    }
    this.closing = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.log('debug', 'upstream did not close in time; terminating');
        safely(() => transport.terminate());
        finish();
      }, this.options.closeTimeoutMs);
      timer.unref?.();
      const finish = () => {
        clearTimeout(timer);
        this.closeDone = null;
        this.transport = null;
        resolve();
      };
      this.closeDone = finish;
      if (transport.readyState === WebSocket.OPEN && wasConnected && farewell) {
        for (const message of farewell.messages) this.send(message);
        if (!farewell.upstreamCloses) safely(() => transport.close(1000, this.options.closeReason));
      } else if (transport.readyState === WebSocket.OPEN) {
        safely(() => transport.close(1000, this.options.closeReason));
      } else {
        safely(() => transport.terminate());
      }
    });
    return this.closing;
  }

  // --- connection -----------------------------------------------------------------------------------

  private connect(): void {
    this.phase = 'connecting';
    this.upgradeStatus = null;
    this.problem = null;
    this.fatalProblem = null;
    this.lastUpstreamError = null;
    let transport: UpstreamTransport;
    try {
      transport = this.openTransport(this.options.url, {
        headers: this.options.headers ?? {},
        handshakeTimeout: this.options.setupTimeoutMs,
      });
    } catch (err) {
      this.fail({ reason: 'cannot_open', problem: errorMessage(err) });
      return;
    }
    this.transport = transport;
    const current = () => transport === this.transport;
    transport.on('unexpected-response', (_req: unknown, res: IncomingMessage) => {
      if (current()) {
        this.upgradeStatus = res.statusCode ?? 0;
        this.problem = `HTTP ${res.statusCode} at the WebSocket upgrade`;
      }
      res.resume();
      safely(() => transport.terminate());
    });
    transport.on('open', () => {
      if (current() && this.phase === 'connecting') this.handle(() => this.handlers.onOpen());
    });
    transport.on('message', (data: RawData, isBinary: boolean) => {
      if (current() && (this.phase === 'connecting' || this.phase === 'connected')) {
        this.handle(() => this.handlers.onMessage(toBuffer(data), isBinary));
      }
    });
    transport.on('error', (err: Error) => {
      if (current() && !this.problem) this.problem = err.message;
    });
    transport.on('close', (code: number, reason: Buffer) => this.onClose(transport, code, String(reason ?? '')));
    this.setupTimer = setTimeout(() => {
      this.setupTimer = null;
      if (!current() || this.phase !== 'connecting') return;
      const upstreamError = this.lastUpstreamError ? ` (upstream error: ${this.lastUpstreamError})` : '';
      this.problem = `no session within ${this.options.setupTimeoutMs} ms${upstreamError}`;
      safely(() => transport.terminate());
    }, this.options.setupTimeoutMs);
    this.setupTimer.unref?.();
  }

  private onClose(transport: UpstreamTransport, code: number, reason: string): void {
    if (transport !== this.transport) return;
    this.transport = null;
    this.clearTimer('setup');
    if (this.phase === 'closed') {
      this.closeDone?.();
      return;
    }
    if (this.phase === 'failed') return;
    const wasConnected = this.phase === 'connected';
    this.handle(() => this.handlers.onConnectionLost());
    // The owner may have closed the socket from that handler.
    if ((this.phase as SocketState) === 'closed') return;
    const status = this.upgradeStatus;
    if (status !== null && this.fatalStatuses.includes(status)) {
      this.fail({ reason: 'refused', status });
      return;
    }
    if (this.fatalProblem) {
      this.fail({ reason: 'rejected', problem: this.fatalProblem });
      return;
    }
    const problem = this.problem ?? (code === 1006 ? 'connection dropped' : `closed with code ${code}${reason ? ` (${reason})` : ''}`);
    this.log(wasConnected ? 'warn' : 'info', 'upstream connection ended', { problem, wasReady: wasConnected });
    this.scheduleReconnect(problem);
  }

  private scheduleReconnect(problem: string): void {
    const { maxAttempts } = this.options.reconnect;
    if (this.attempts >= maxAttempts) {
      this.fail({ reason: 'gave_up', attempts: this.attempts, problem });
      return;
    }
    this.phase = 'waiting';
    if (!this.outage) {
      this.outage = true;
      this.report({ state: 'reconnecting', problem });
      if ((this.phase as SocketState) !== 'waiting') return; // closed from the handler
    }
    const attempt = ++this.attempts;
    const delay = backoffDelay(attempt, this.options.reconnect);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.phase !== 'waiting') return;
      this.log('debug', 'reconnecting', { attempt, delay });
      this.connect();
    }, delay);
  }

  private fail(failure: UpstreamFailure): void {
    if (this.phase === 'failed' || this.phase === 'closed') return;
    this.phase = 'failed';
    this.clearTimer('retry');
    this.clearTimer('setup');
    const transport = this.transport;
    this.transport = null;
    if (transport) safely(() => transport.terminate());
    this.queue.clear();
    this.report({ state: 'failed', failure });
  }

  // --- streamed messages ------------------------------------------------------------------------------

  private transmit(message: string | Buffer): void {
    const transport = this.transport;
    if (!transport || transport.readyState !== WebSocket.OPEN) {
      this.queue.push(message);
      return;
    }
    if (transport.bufferedAmount > this.options.maxBufferedBytes) {
      if (this.droppedBackpressure++ % 50 === 0) {
        this.log('warn', 'upstream is slow; dropping messages', { dropped: this.droppedBackpressure });
      }
      return;
    }
    this.send(message);
  }

  // --- helpers --------------------------------------------------------------------------------------

  private report(status: UpstreamStatus): void {
    this.handle(() => this.handlers.onStatus(status));
  }

  /** Runs an owner handler; a throw is logged, never propagated. */
  private handle(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log('warn', 'a handler threw', { err: errorMessage(err) });
    }
  }

  private clearTimer(which: 'retry' | 'setup'): void {
    const timer = which === 'retry' ? this.retryTimer : this.setupTimer;
    if (timer) clearTimeout(timer);
    if (which === 'retry') this.retryTimer = null;
    else this.setupTimer = null;
  }
}
