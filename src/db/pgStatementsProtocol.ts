// The messages between the main thread (src/db/pgStatementsThread.ts) and the worker thread that sends
// PostgreSQL's hottest reads (src/db/pgStatementsWorker.ts), by structured clone.
import type { SerializedError } from './threadErrors.js';

export interface PgStatementsWorkerData {
  /** node-postgres's settings, as the main thread's pool has them (the worker adds its parsers). */
  connection: { connectionString: string } & Record<string, string | number | boolean>;
  /** Connections of the worker's own pool. */
  poolSize: number;
}

/** Main thread -> worker: run a named statement, or end the pool and the thread. */
export type PgStatementsRequest = { type: 'rows'; id: number; name: string; text: string; values: unknown[] } | { type: 'close'; id: number };

/**
 * Worker -> main thread. `localTimestamps`: the result's columns, sent only when some are `timestamp`
 * (without time zone), which the worker leaves as text for the main thread to read in its time zone.
 */
export type PgStatementsResponse =
  | { type: 'rows'; id: number; rows: unknown[]; localTimestamps?: Array<{ name: string; dataTypeID: number }> }
  | { type: 'error'; id: number; error: SerializedError }
  | { type: 'closed'; id: number };
