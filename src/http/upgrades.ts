// The one dispatcher of HTTP upgrades on the API's server. A WebSocket upgrade goes to the route its
// path starts with (the media transports', src/calls/media/transport.ts); one no route takes is refused
// as the caller says, a guess counted against the client address like any other. An upgrade to a
// protocol we do not speak (curl's `Upgrade: h2c`) is answered as an ordinary HTTP/1.1 request.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { errors } from '../errors.js';
import type { FailedAttempts } from '../ratelimit/failedAttempts.js';
import type { UpgradeRoute } from '../calls/media/upgradeRoute.js';
import { refuseUpgrade, serveAsPlainHttp } from './connections.js';

interface UpgradeDeps {
  /** The answer to an upgrade no route takes (its target is not a URL, or no prefix matches). */
  unmatched: { status: number; detail: string };
  failedAttempts: FailedAttempts;
  logger: Logger;
}

export function routeUpgrades(server: http.Server, routes: readonly UpgradeRoute[], deps: UpgradeDeps): void {
  const prefixes = routes.map((route) => route.pathPrefix);
  const shared = prefixes.find((prefix, i) => prefixes.indexOf(prefix) !== i);
  if (shared) throw new Error(`two upgrade routes share the path prefix ${shared}`);
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node let go of the socket, error handling included: a client that resets must not end the process.
    socket.on('error', (err) => deps.logger.debug({ err }, 'upgrade socket error'));
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return serveAsPlainHttp(server, req, socket, head);
    const path = pathOf(req);
    const route = path === null ? undefined : routes.find((candidate) => path.startsWith(candidate.pathPrefix));
    if (route) route.handle(req, socket, head);
    else refuseUnmatched(req, socket, deps);
  });
}

/** The path as the transports read it (dot segments resolved); null when the target is not a URL. */
function pathOf(req: http.IncomingMessage): string | null {
  try {
    return new URL(req.url ?? '/', 'http://upgrade.invalid').pathname;
  } catch {
    return null;
  }
}

/** The unmatched answer (a guess), or 429 when the address has guessed too often already. */
function refuseUnmatched(req: http.IncomingMessage, socket: Duplex, { unmatched, failedAttempts, logger }: UpgradeDeps): void {
  const address = failedAttempts.addressOf(req);
  failedAttempts.retryAfter(address).then(
    (wait) => {
      if (wait) {
        const error = errors.tooManyFailedAttempts(wait);
        return refuseUpgrade(socket, error.status, String(error.detail), error.headers);
      }
      refuseUpgrade(socket, unmatched.status, unmatched.detail);
      return failedAttempts.record(address).catch((err) => logger.error({ err }, 'counting a refused upgrade failed'));
    },
    (err) => {
      logger.error({ err }, 'refusing an upgrade failed');
      refuseUpgrade(socket, 500, 'internal error');
    },
  );
}
