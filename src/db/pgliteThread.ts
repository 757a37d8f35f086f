// The main thread's handle on the embedded database, which runs in a worker thread (src/db/pgliteWorker.ts):
// the part of PGlite's interface that knex-pglite uses (waitReady, query, close, closed), so Knex keeps
// all it does on PGlite (one connection, so transactions one after another; returning; migrations).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import type { PgliteRequest, PgliteResponse, PgliteResults, PgliteWorkerData } from './pgliteProtocol.js';
import { deserializeError } from './threadErrors.js';
import { finishRows, serializeParam } from './types.js';
import { startWorker, WorkerRequests } from './workerThread.js';

export interface PgliteThreadOptions {
  /**
   * Called once when the worker thread stops without being closed (a crash in PGlite, an exhausted
   * heap): every statement from then on fails with `connection_failure` (08006), so requests get 503.
   */
  onLost?: (error: Error) => void;
}

const require = createRequire(import.meta.url);

let compiledPglite: Promise<WebAssembly.Module> | undefined;

/**
 * PGlite's WebAssembly, compiled once per process and shared by every worker (a compiled module crosses
 * threads without a copy): each database opened after the first starts without compiling it again.
 */
function pgliteWasmModule(): Promise<WebAssembly.Module> {
  compiledPglite ??= readFile(require.resolve('@electric-sql/pglite/pglite.wasm')).then((bytes) => WebAssembly.compile(bytes));
  return compiledPglite;
}

export class PgliteThread {
  /** Resolves once PGlite has opened its data in the worker; rejects when it could not. */
  readonly waitReady: Promise<void>;
  private readonly worker: Worker;
  private readonly requests: WorkerRequests<PgliteResponse>;
  private closing: Promise<void> | undefined;
  private stopped: Error | undefined;

  /** Starts the worker; `waitReady` tells when PGlite has opened. */
  static async start(data: Omit<PgliteWorkerData, 'pgliteWasmModule'>, options: PgliteThreadOptions = {}): Promise<PgliteThread> {
    return new PgliteThread({ ...data, pgliteWasmModule: await pgliteWasmModule() }, options);
  }

  private constructor(data: PgliteWorkerData, private readonly options: PgliteThreadOptions) {
    this.worker = startWorker(import.meta.url, 'pgliteWorker', { workerData: data, transferList: data.loadDataDir ? [data.loadDataDir] : [] });
    this.requests = new WorkerRequests(this.worker);
    let started = false;
    this.waitReady = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (messages: PgliteResponse[]) => {
        for (const message of messages) {
          if (message.type === 'ready') {
            started = true;
            this.requests.updateRef();
            resolve();
          } else if (message.type === 'failed') reject(deserializeError(message.error));
          else if (message.type === 'error') this.requests.fail(message.id, deserializeError(message.error));
          else this.requests.answer(message.id, message);
        }
      });
      this.worker.on('error', (error) => {
        reject(error); // no effect once started
        this.stop(error, started);
      });
      this.worker.on('exit', (code) => {
        const error = new Error(`the embedded database's worker thread stopped (exit code ${code})`);
        reject(error); // no effect once started or failed
        this.stop(error, started);
      });
    });
  }

  get closed(): boolean {
    return this.stopped !== undefined;
  }

  async query(sql: string, params?: unknown[], options?: Record<string, unknown>): Promise<PgliteResults> {
    const wireParams = params?.map(serializeParam);
    const answer = await this.request((id) => ({ type: 'query', id, sql, params: wireParams, options }));
    const { result } = answer as Extract<PgliteResponse, { type: 'result' }>;
    finishRows(result.fields, result.rows);
    return result;
  }

  /** Closes PGlite in the worker (which writes out what it holds) and ends the thread; once, whoever asks. */
  close(): Promise<void> {
    if (this.stopped && !this.closing) return Promise.resolve();
    return (this.closing ??= this.closeWorker());
  }

  private async closeWorker(): Promise<void> {
    try {
      await this.waitReady;
    } catch {
      return; // never opened: the worker has ended already
    }
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.requests.hold();
    await this.request((id) => ({ type: 'close', id }));
    await exited;
  }

  private async request(build: (id: number) => PgliteRequest): Promise<PgliteResponse> {
    await this.waitReady;
    if (this.stopped) throw this.stopped;
    return this.requests.send(build);
  }

  private stop(cause: Error, started: boolean): void {
    if (this.stopped) return;
    const expected = this.closing !== undefined;
    const error = Object.assign(new Error(expected ? 'the embedded database is closed' : `the embedded database stopped: ${cause.message}`), {
      code: '08006', // connection_failure: src/db/errors.ts answers 503
      cause,
    });
    this.stopped = error;
    this.requests.failAll(error);
    if (!expected && started) this.options.onLost?.(error);
  }
}
