// What a transport is to the rest of the server: a plug-in. It names itself, declares the Prometheus
// gauges it owns, the WebSocket upgrades it answers on the API's HTTP server and the listener it opens
// itself, admits its connections with the shared steps (./admission.ts), puts them into rooms with
// `plane.enter`, and closes what is left at shutdown. Transports are listed in ./transports/index.ts,
// one line each; the composition root starts whatever is listed, and nothing else names one
// (docs/calls-media-plane.md, "How to add a transport").
import type { GaugeMetric } from '../../observability/metrics.js';
import type { UpgradeRoute } from './upgradeRoute.js';
import type { MediaPlane, Transport } from './plane.js';
import type { Config } from '../../config.js';
import type { EventBus } from '../../events/bus.js';
import type { FailedAttempts } from '../../ratelimit/failedAttempts.js';
import type { Logger } from 'pino';
import type { Knex } from 'knex';

export type { UpgradeRoute };

export interface MediaTransport extends Transport {
  /** WebSocket upgrades of the API's HTTP server it answers, by path prefix: no two transports share one. */
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
   * The server's database, settings, bus, guessing per address, logger and clock (read through `app`, where tests
   * move it). The AudioSocket transport writes the port it bound: phone-line answers name it.
   */
  app: { db: Knex; config: Config; events: EventBus; failedAttempts: FailedAttempts; logger: Logger; now: () => number; audioSocketPort: number };
}

/** One entry of the list of transports. */
export type TransportFactory = (context: TransportContext) => MediaTransport;
