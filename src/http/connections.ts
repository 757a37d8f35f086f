// The HTTP server's own defences, below the app: deadlines for requests that arrive slowly or not at
// all, connections that say nothing closed, a JSON answer to whatever the HTTP parser refuses, and
// requests that ask to switch to a protocol we do not speak served as plain HTTP/1.1.
import http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ConnectionLimits } from '../config.js';
import { errors, type ApiError } from '../errors.js';

type HttpLimits = Pick<ConnectionLimits, 'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs' | 'httpIdleTimeoutMs'>;

export function createHttpServer(handler: http.RequestListener, limits: HttpLimits, logger: Logger): http.Server {
  const log = logger.child({ component: 'http' });
  const server = http.createServer(
    {
      headersTimeout: limits.httpHeadersTimeoutMs,
      requestTimeout: limits.httpRequestTimeoutMs,
      // Node checks the two deadlines above on this interval: often enough to hold them within a quarter.
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(limits.httpHeadersTimeoutMs / 4))),
    },
    handler,
  );
  server.keepAliveTimeout = limits.httpKeepAliveTimeoutMs;
  server.timeout = limits.httpIdleTimeoutMs;

  // The request each connection is being answered for, while it is.
  const answering = new WeakMap<Duplex, http.IncomingMessage>();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    answering.set(req.socket, req);
    res.once('close', () => {
      if (answering.get(req.socket) === req) answering.delete(req.socket);
    });
  });
  // A connection silent for the idle timeout is closed, unless the server is still answering a request
  // it received whole (a slow engine, an event stream): that is the server's silence, not the client's.
  server.on('timeout', (socket: Duplex) => {
    if (answering.get(socket)?.complete) return;
    socket.destroy();
  });

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    log.debug({ code: err.code }, 'http: client error');
    // Node's own rule: answer only when no part of a response has gone out on this connection yet.
    if (err.code === 'ECONNRESET' || !socket.writable || responseInFlight(socket)?.headersSent) {
      socket.destroy();
      return;
    }
    const answer =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? errors.requestTimeout()
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? errors.headersTooLarge()
          : errors.malformedRequest();
    socket.once('finish', () => socket.destroy());
    socket.end(rawErrorResponse(answer));
  });

  // Accept failures (e.g. out of file descriptors) must not end the process.
  server.on('error', (err) => log.error({ err }, 'http: server error'));
  return server;
}

/** A complete HTTP/1.1 error answer for a connection the app never saw; the connection closes after it. */
export function rawErrorResponse(error: ApiError): string {
  const body = JSON.stringify({ detail: error.detail });
  const headers = Object.entries(error.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return (
    `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status] ?? 'Error'}\r\n` +
    'Connection: close\r\n' +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    headers +
    '\r\n' +
    body
  );
}

/** The answer the HTTP server is writing on `socket`, if any (Node keeps it on the socket). */
function responseInFlight(socket: Duplex): http.ServerResponse | undefined {
  return (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage ?? undefined;
}

// Hop-by-hop parts of an upgrade request that must not survive when it is served as plain HTTP.
const UPGRADE_HEADERS = new Set(['upgrade', 'http2-settings']);

/**
 * Node hands every request with an Upgrade header to the 'upgrade' listeners and lets go of its
 * connection. A request for a protocol we do not speak (curl --http2 sends `Upgrade: h2c`) is answered
 * over HTTP/1.1, as RFC 9110 §7.8 allows: its head is put back on the connection without the upgrade
 * and the connection handed to the HTTP server again, so the request gets everything an ordinary one
 * does (bodies of any framing, keep-alive, deadlines, close and error handling).
 */
export function serveAsPlainHttp(server: http.Server, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
  const inFlight = responseInFlight(socket);
  if (inFlight) {
    // Pipelined behind an answer still going out, whose connection state Node has already let go of:
    // the connection ends once that answer is out, and the client sends the rest again (RFC 9112 §9.3.2).
    inFlight.once('close', () => (socket as net.Socket).destroySoon());
    return;
  }
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i];
    let value = req.rawHeaders[i + 1];
    const lower = name.toLowerCase();
    if (UPGRADE_HEADERS.has(lower)) continue;
    if (lower === 'connection') {
      value = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token && !UPGRADE_HEADERS.has(token.toLowerCase()))
        .join(', ');
      if (!value) continue;
    }
    lines.push(`${name}: ${value}`);
  }
  // Header values reach us decoded as latin1; encoding them back the same way restores the bytes sent.
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
  server.emit('connection', socket);
}

/**
 * Refuses a WebSocket upgrade with an ordinary JSON answer (`{"detail"}`) and closes the connection:
 * what media transports answer before upgrading.
 */
export function refuseUpgrade(socket: Duplex, status: number, detail: string, headers: Readonly<Record<string, string>> = {}): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ detail });
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Connection: close\r\n' +
      extra +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      '\r\n' +
      body,
  );
}
