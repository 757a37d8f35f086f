// What a transport is to the rest of the server: a plug-in. It names itself, declares the Prometheus
// gauges it owns, the WebSocket upgrades it answers on the API's HTTP server and the listener it opens
// itself, admits its connections with the shared steps (./admission.ts), puts them into rooms with
// `plane.enter`, and closes what is left at shutdown. Transports are listed in ./transports/index.ts,
// one line each; the composition root starts whatever is listed, and nothing else names one
// (docs/calls-media-plane.md, "How to add a transport").
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { AppContext } from '../../appContext.js';
import type { GaugeMetric } from '../../metrics.js';
import type { MediaPlane, Transport } from './plane.js';

/** WebSocket upgrades on the API's HTTP server that one transport answers. */
export interface UpgradeRoute {
  /** The upgrades whose path starts so are this route's (e.g. `/media/twilio/`). */
  readonly pathPrefix: string;
  /**
   * Admits the upgrade and upgrades it, or refuses it with an HTTP answer; never throws. The socket
   * has an error listener already (a client that resets ends nothing but itself).
   */
  handle(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
}

export interface MediaTransport extends Transport {
  /** Its upgrade routes: no two transports share a prefix. */
  readonly upgrades?: readonly UpgradeRoute[];
  /** Its gauges on GET /metrics, under the names operators' dashboards know. */
  readonly metrics?: readonly GaugeMetric[];
  /**
   * Opens the listener it serves on its own (AudioSocket's TCP port), once the HTTP server listens.
   * Resolves with the port bound, or null when it could not (logged; the transport stays off).
   */
  listen?(): Promise<number | null>;
  /** Connections it holds open now, admitted or not (what a shutdown or a hostile client leaves behind). */
  openConnections(): number;
}

/** What every transport is made with. */
export interface TransportContext {
  plane: MediaPlane;
  /**
   * The server's settings, bus, guessing per address, logger and clock (read through `app`, where tests
   * move it). The AudioSocket transport writes the port it bound: phone-line answers name it.
   */
  app: Pick<AppContext, 'config' | 'events' | 'failedAttempts' | 'logger' | 'now' | 'audioSocketPort'>;
}

/** One entry of the list of transports. */
export type TransportFactory = (context: TransportContext) => MediaTransport;
