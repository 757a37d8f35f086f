// An HTTP upgrade as a media transport claims it (src/calls/media/transport.ts); the HTTP layer
// (src/http/upgrades.ts) dispatches each WebSocket upgrade of the API's server to the route it matches.
import type http from 'node:http';
import type { Duplex } from 'node:stream';

export interface UpgradeRoute {
  /** The upgrades whose path starts so are this route's (e.g. `/media/twilio/`). */
  readonly pathPrefix: string;
  /**
   * Admits the upgrade and upgrades it, or refuses it with an HTTP answer; never throws. The socket
   * has an error listener already (a client that resets ends nothing but itself).
   */
  handle(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
}
