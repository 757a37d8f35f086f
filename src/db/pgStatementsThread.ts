// The main thread's handle on the worker that sends PostgreSQL's hot statements outside transactions
// (./pgStatementsWorker.ts).
import type { Worker } from 'node:worker_threads';
import type { NamedStatement } from './statement.js';
import type { PgStatementResult, PgStatementsRequest, PgStatementsResponse, PgStatementsWorkerData } from './pgStatementsProtocol.js';
import { deserializeError } from './threadErrors.js';
import { finishRows, serializeParam } from './types.js';
import { startWorker, WorkerRequests } from './workerThread.js';

export class PgStatementsThread {
  private readonly worker: Worker;
  private readonly requests: WorkerRequests<PgStatementResult>;
  private closing: Promise<void> | undefined;
  /** Set once the thread has ended: closed, or lost (an exhausted heap, a crash). */
  private ended = false;

  constructor(data: PgStatementsWorkerData) {
    this.worker = startWorker(import.meta.url, 'pgStatementsWorker', { workerData: data });
    this.requests = new WorkerRequests(this.worker);
    this.requests.updateRef();
    this.worker.on('message', (messages: PgStatementsResponse[]) => messages.forEach((message) => this.settle(message)));
    this.worker.on('error', (error) => this.end(error));
    this.worker.on('exit', (code) => this.end(new Error(`the worker thread of PostgreSQL's statements stopped (exit code ${code})`)));
  }

  /** Whether statements can be sent: the thread runs and is not closing. */
  get running(): boolean {
    return !this.ended && !this.closing;
  }

  /** A named statement, run by the worker on a connection of its pool (never in a transaction). */
  run(statement: NamedStatement, values: readonly unknown[]): Promise<PgStatementResult> {
    // Dates as this thread's wall clock, as pg on this thread would send them: the worker has its own TZ.
    const wireValues = values.map(serializeParam);
    return this.requests.send((id): PgStatementsRequest => ({ type: 'run', id, name: statement.name, text: statement.text, values: wireValues }));
  }

  /** Ends the worker's pool and the thread; once, whoever asks. */
  close(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return (this.closing ??= this.closeWorker());
  }

  private async closeWorker(): Promise<void> {
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.requests.hold();
    this.requests.flush();
    // Its answer is the thread's end.
    this.worker.postMessage([{ type: 'close', id: 0 } satisfies PgStatementsRequest]);
    await exited;
  }

  private settle(message: PgStatementsResponse): void {
    if (message.type === 'error') this.requests.fail(message.id, deserializeError(message.error));
    else if (message.type === 'result') {
      if (message.unfinished) finishRows(message.unfinished, message.result.rows);
      this.requests.answer(message.id, message.result);
    }
  }

  private end(cause: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.requests.failAll(
      Object.assign(new Error(`PostgreSQL's statements were cut off: ${cause.message}`), {
        code: '08006', // connection_failure: src/db/errors.ts answers 503
        cause,
      }),
    );
  }
}
