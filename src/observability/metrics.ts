// Prometheus metrics of one instance (prom-client), served at GET /metrics to the operator. Counters and
// histograms are updated where things happen; what the instance holds open right now (streams,
// rooms, sockets) is read when scraped. Labels are low-cardinality on purpose: operations and
// statuses, never organizations or keys (those are in the request log).
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the instance holds open when scraped (each media transport adds its own gauges: addGauge). */
export interface OpenCounts {
  eventStreams: number;
  mediaRooms: number;
  /** Interpreters connected upstream now, and their reconnects since start. */
  interpreters: number;
  interpreterReconnects: number;
}

/** A gauge read when scraped: what is open now, or a total kept elsewhere. */
export interface GaugeMetric {
  readonly name: string;
  readonly help: string;
  read(): number;
}

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by contract operation (or "page", "unmatched") and status',
    labelNames: ['operation', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by contract operation (event streams: until they end)',
    labelNames: ['operation'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly rateLimitRefusals = new Counter({
    name: 'rate_limit_refusals_total',
    help: 'Requests refused with 429 by a rate limit, by the limit (api key, app, call, chat session)',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  readonly ledgerCharges = new Counter({
    name: 'ledger_charges_total',
    help: 'Charges written to the ledger and committed, by kind of usage and mode (test-mode charges cost nothing)',
    labelNames: ['kind', 'mode'] as const,
    registers: [this.registry],
  });
  readonly eventDeliveryLag = new Histogram({
    name: 'event_delivery_lag_seconds',
    help: 'From an event being made to its being queued for the live streams that show it (once per event)',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [this.registry],
  });

  readonly interpretationLatency = new Histogram({
    name: 'media_interpretation_latency_seconds',
    help: "From the end of a turn of a side's speech to the first interpreted audio sent to the other side, by direction",
    labelNames: ['direction'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
    registers: [this.registry],
  });

  constructor(open: () => OpenCounts, options: { defaultMetrics?: boolean } = {}) {
    const gauge = (name: string, help: string, read: (counts: OpenCounts) => number) => this.addGauge({ name, help, read: () => read(open()) });
    gauge('event_streams_open', 'Server-sent event streams open on this instance', (c) => c.eventStreams);
    gauge('media_rooms', 'Calls with media on this instance', (c) => c.mediaRooms);
    gauge('media_interpreters_connected', 'Interpreter sessions (one per direction of a call) connected upstream now', (c) => c.interpreters);
    gauge('media_interpreter_reconnects', 'Times an interpreter session lost its upstream connection since start', (c) => c.interpreterReconnects);
    // Process CPU, memory, event-loop delay and handles, as every Node service reports them.
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** Registers a gauge; a name taken already throws (two owners of one metric are a wiring mistake). */
  addGauge({ name, help, read }: GaugeMetric): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }
}
