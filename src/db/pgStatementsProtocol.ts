// The messages between the main thread (src/db/pgStatementsThread.ts) and the worker thread that sends
// PostgreSQL's hot statements outside transactions (src/db/pgStatementsWorker.ts), by structured clone.
import type { SerializedError } from './threadErrors.js';

export interface PgStatementsWorkerData {
  /** node-postgres's settings, as the main thread's pool has them (the worker adds its parsers). */
  connection: { connectionString: string } & Record<string, string | number | boolean>;
  /** Connections of the worker's own pool. */
  poolSize: number;
}

/** Main thread -> worker: run a named statement, or end the pool and the thread. */
export type PgStatementsRequest = { type: 'run'; id: number; name: string; text: string; values: unknown[] } | { type: 'close'; id: number };

/** What a statement answered, as node-postgres gives it (the part knex and the callers read). */
export interface PgStatementResult {
  rows: unknown[];
  rowCount: number | null;
  command: string;
}

/**
 * Worker -> main thread. `unfinished`: the result's columns, sent only when some hold values the main
 * thread finishes (`timestamp` read in its time zone, bytea made Buffers again: see ./types.ts).
 */
export type PgStatementsResponse =
  | { type: 'result'; id: number; result: PgStatementResult; unfinished?: Array<{ name: string; dataTypeID: number }> }
  | { type: 'error'; id: number; error: SerializedError }
  | { type: 'closed'; id: number };
