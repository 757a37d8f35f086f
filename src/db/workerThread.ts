// What the database's worker threads (PGlite's, and the one that sends PostgreSQL's hot statements) share:
// starting the worker next to its handle, requests answered by id, and messages posted per turn.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker, type MessagePort, type WorkerOptions } from 'node:worker_threads';
import { serializeError, type SerializedError } from './threadErrors.js';

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

/**
 * Messages across a thread boundary, posted together: what is sent during one turn of the event loop
 * goes as one array after it (setImmediate). Under load each posted message cost its structured clone's
 * setup and a wake-up of the other thread; now a turn's statements (or answers) share them. The receiving
 * side takes arrays. `failed`: a message that cannot be cloned (a function among a statement's values);
 * the others of its turn are posted without it.
 */
export class MessageBatcher<Message> {
  private waiting: Message[] = [];

  constructor(
    private readonly post: (messages: Message[]) => void,
    private readonly failed: (message: Message, error: unknown) => void = () => undefined,
  ) {}

  send(message: Message): void {
    if (this.waiting.push(message) === 1) setImmediate(() => this.flush());
  }

  /** Posts `message` now, after what waits, with no flush left scheduled for it (a side that answers at once). */
  sendNow(message: Message): void {
    this.waiting.push(message);
    this.flush();
  }

  /** Posts what waits now (before the thread's port closes). */
  flush(): void {
    if (!this.waiting.length) return;
    const messages = this.waiting;
    this.waiting = [];
    try {
      this.post(messages);
    } catch {
      for (const message of messages) {
        try {
          this.post([message]);
        } catch (error) {
          this.failed(message, error);
        }
      }
    }
  }
}

/**
 * A worker's answers to the main thread, posted as MessageBatcher posts them. An answer that cannot
 * cross (a value structured clone refuses) is answered with that error instead.
 */
export function workerReplies<Answer extends { type: string }>(port: MessagePort): MessageBatcher<Answer> {
  return new MessageBatcher<Answer>(
    (answers) => port.postMessage(answers),
    (answer, error) => {
      if (!('id' in answer)) return;
      const refused: { type: 'error'; id: unknown; error: SerializedError } = { type: 'error', id: answer.id, error: serializeError(error) };
      port.postMessage([refused]);
    },
  );
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
  private readonly outbox: MessageBatcher<{ id: number }>;

  constructor(private readonly worker: Worker) {
    // A value that cannot cross (DataCloneError) fails its own request only.
    this.outbox = new MessageBatcher(
      (messages) => worker.postMessage(messages),
      (message, error) => this.fail(message.id, error as Error),
    );
  }

  /** Posts the message made for a new id (with the turn's others); settled by `answer` or `fail` for that id. */
  send(message: (id: number) => { id: number }): Promise<Answer> {
    const id = this.nextId++;
    const answer = new Promise<Answer>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.outbox.send(message(id));
    this.updateRef();
    return answer;
  }

  /** Posts what waits at once, without waiting for the end of the turn. */
  flush(): void {
    this.outbox.flush();
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
