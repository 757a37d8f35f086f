// The messages between the main thread (src/db/pgliteThread.ts) and the worker thread that owns PGlite
// (src/db/pgliteWorker.ts). Everything in them crosses by structured clone: Dates, Uint8Arrays (bytea),
// plain objects and arrays do; functions and class instances other than those do not.
import type { SerializedError } from './threadErrors.js';

/** What the worker opens: a data directory on disk, or an in-memory database (empty or from a saved one). */
export interface PgliteWorkerData {
  dataDir?: string;
  /** A data directory saved with PGlite's `dumpDataDir()` (a tar), moved to the worker, not copied. */
  loadDataDir?: ArrayBuffer;
  /** PGlite's WebAssembly, compiled once by the main thread for every worker. */
  pgliteWasmModule: WebAssembly.Module;
}

/** Main thread -> worker. */
export type PgliteRequest =
  | { type: 'query'; id: number; sql: string; params?: unknown[]; options?: Record<string, unknown> }
  | { type: 'close'; id: number };

/** What PGlite's `query()` answers, as it crosses the thread boundary. */
export interface PgliteResults {
  rows: unknown[];
  fields: Array<{ name: string; dataTypeID: number }>;
  affectedRows?: number;
  command?: string;
  rowCount?: number;
}

/** Worker -> main thread. `ready` and `failed` answer the start, the others a request by its id. */
export type PgliteResponse =
  | { type: 'ready' }
  | { type: 'failed'; error: SerializedError }
  | { type: 'result'; id: number; result: PgliteResults }
  | { type: 'error'; id: number; error: SerializedError }
  | { type: 'closed'; id: number };
