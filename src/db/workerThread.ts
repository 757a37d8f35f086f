// What the database's worker threads (PGlite's, and the one that sends PostgreSQL's hot statements) share:
// starting the worker next to its handle, and requests answered by id.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/**
 * Starts the worker `name` (a module name without extension) that sits next to the module at `callerUrl`:
 * the compiled JavaScript (dist/, `npm start`) or, under tsx and vitest, the TypeScript source through tsx.
 */
export function startWorker(callerUrl: string, name: string, options: Pick<WorkerOptions, 'workerData' | 'transferList'>): Worker {
  const entry = new URL(callerUrl.endsWith('.ts') ? `./${name}.ts` : `./${name}.js`, callerUrl);
  if (entry.pathname.endsWith('.js')) return new Worker(entry, options);
  // Node 20 does not pass its module hooks (`--import tsx`) on to worker threads; tsx's require hook works in one.
  // The bootstrap runs as CommonJS or, under `node --input-type=module`, as a module: it needs no `require` of its own.
  const [tsx, file] = [require.resolve('tsx/cjs/api'), fileURLToPath(entry)].map((path) => JSON.stringify(path));
  const bootstrap = `import('node:module').then(({ createRequire }) => { const load = createRequire(${file}); load(${tsx}).register(); load(${file}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

interface Pending<Answer> {
  resolve(answer: Answer): void;
  reject(error: Error): void;
}

/**
 * Requests to a worker, each answered by its id. The worker keeps the process alive only while a request
 * waits for it, as a socket would, or while it is held (closing).
 */
export class WorkerRequests<Answer> {
  private readonly pending = new Map<number, Pending<Answer>>();
  private nextId = 1;
  private held = false;

  constructor(private readonly worker: Worker) {}

  /** Posts the message made for a new id; settled by `answer` or `fail` for that id. */
  send(message: (id: number) => unknown): Promise<Answer> {
    const id = this.nextId++;
    const answer = new Promise<Answer>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    try {
      this.worker.postMessage(message(id)); // throws DataCloneError for a value that cannot cross
    } catch (error) {
      this.pending.delete(id);
      throw error;
    }
    this.updateRef();
    return answer;
  }

  answer(id: number, answer: Answer): void {
    this.take(id)?.resolve(answer);
  }

  fail(id: number, error: Error): void {
    this.take(id)?.reject(error);
  }

  /** The worker has ended: every request still waiting fails with `error`. */
  failAll(error: Error): void {
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }

  /** Keeps the process alive until the worker exits. */
  hold(): void {
    this.held = true;
    this.updateRef();
  }

  updateRef(): void {
    if (this.pending.size > 0 || this.held) this.worker.ref();
    else this.worker.unref();
  }

  private take(id: number): Pending<Answer> | undefined {
    const pending = this.pending.get(id);
    if (!pending) return undefined;
    this.pending.delete(id);
    this.updateRef();
    return pending;
  }
}
