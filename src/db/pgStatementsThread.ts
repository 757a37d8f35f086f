// The main thread's handle on the worker that sends PostgreSQL's hot statements outside transactions (./pgStatementsWorker.ts).
import type { Worker } from 'node:worker_threads';
import type { NamedStatement } from './statement.js';
import type { PgStatementResult, PgStatementsRequest, PgStatementsResponse, PgStatementsWorkerData } from './pgStatementsProtocol.js';
import { deserializeError } from './threadErrors.js';
import { finishRows, serializeParam } from './types.js';
import { startWorker } from './workerEntry.js';

interface Pending {
  resolve(result: PgStatementResult): void;
  reject(error: Error): void;
}

export class PgStatementsThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing: Promise<void> | undefined;
  /** Set once the thread has ended: closed, or lost (an exhausted heap, a crash). */
  private ended = false;

  constructor(data: PgStatementsWorkerData) {
    this.worker = startWorker(import.meta.url, 'pgStatementsWorker', { workerData: data });
    this.worker.unref();
    this.worker.on('message', (message: PgStatementsResponse) => this.settle(message));
    this.worker.on('error', (error) => this.end(error));
    this.worker.on('exit', (code) => this.end(new Error(`the worker thread of PostgreSQL's reads stopped (exit code ${code})`)));
  }

  /** Whether statements can be sent: the thread runs and is not closing. */
  get running(): boolean {
    return !this.ended && !this.closing;
  }

  /** A named statement, run by the worker on a connection of its pool (never in a transaction). */
  run(statement: NamedStatement, values: readonly unknown[]): Promise<PgStatementResult> {
    const id = this.nextId++;
    const answer = new Promise<PgStatementResult>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    // Dates as this thread's wall clock, as pg on this thread would send them: the worker has its own TZ.
    const request: PgStatementsRequest = { type: 'run', id, name: statement.name, text: statement.text, values: values.map(serializeParam) };
    try {
      this.worker.postMessage(request); // throws DataCloneError for a value that cannot cross
    } catch (error) {
      this.pending.delete(id);
      throw error;
    }
    if (this.pending.size === 1) this.worker.ref();
    return answer;
  }

  /** Ends the worker's pool and the thread; once, whoever asks. */
  close(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return (this.closing ??= this.closeWorker());
  }

  private async closeWorker(): Promise<void> {
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.ref();
    this.worker.postMessage({ type: 'close', id: 0 } satisfies PgStatementsRequest);
    await exited;
  }

  private settle(message: PgStatementsResponse): void {
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    // The worker keeps the process alive only while a statement waits for it, as a socket would.
    if (this.pending.size === 0 && !this.closing) this.worker.unref();
    if (message.type === 'error') pending.reject(deserializeError(message.error));
    else if (message.type === 'result') {
      if (message.unfinished) finishRows(message.unfinished, message.result.rows);
      pending.resolve(message.result);
    }
  }

  private end(cause: Error): void {
    if (this.ended) return;
    this.ended = true;
    const error = Object.assign(new Error(`PostgreSQL's reads were cut off: ${cause.message}`), {
      code: '08006', // connection_failure: src/db/errors.ts answers 503
      cause,
    });
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }
}
