// Who may use the embedded database's one connection. PGlite runs one statement at a time in its
// worker thread, which takes them in the order they arrive; knex's pool of one made each request's
// statement wait until the one before it had come back, so the worker and the main thread each sat
// idle while the other worked and the message crossed between them. Now several single statements
// share the connection at once (sent ahead, run in turn), and a transaction has it alone:
// it waits for the statements in flight, and statements that arrive meanwhile wait for it to end, so
// nothing from outside ever runs inside a transaction. First come, first served: a transaction is not
// starved by a stream of statements, nor they by transactions.

export type Leave = () => void;

interface Waiter {
  alone: boolean;
  enter(): void;
}

export class ConnectionGate {
  private sharing = 0;

  /** `maxSharing`: statements in flight at once, at most (their answers reach the main thread in a burst). */
  constructor(private readonly maxSharing = Infinity) {}

  private alone = false;
  private readonly queue: Waiter[] = [];

  /**
   * Resolves once the caller may use the connection (`alone`: with nobody else) with the function that
   * lets go of it; rejects with `timeoutError()` after `timeoutMs` of waiting.
   */
  enter(alone: boolean, timeoutMs: number | undefined, timeoutError: () => Error): Promise<Leave> {
    if (!this.queue.length && this.admits(alone)) return Promise.resolve(this.take(alone));
    return new Promise<Leave>((resolve, reject) => {
      const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
        this.queue.splice(this.queue.indexOf(waiter), 1);
        reject(timeoutError());
        this.admitWaiting(); // a transaction that gave up no longer holds back those behind it
      }, timeoutMs);
      const waiter: Waiter = {
        alone,
        enter: () => {
          clearTimeout(timer);
          resolve(this.take(alone));
        },
      };
      this.queue.push(waiter);
    });
  }

  private admits(alone: boolean): boolean {
    return !this.alone && (alone ? this.sharing === 0 : this.sharing < this.maxSharing);
  }

  private take(alone: boolean): Leave {
    if (alone) this.alone = true;
    else this.sharing++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (alone) this.alone = false;
      else this.sharing--;
      this.admitWaiting();
    };
  }

  private admitWaiting(): void {
    while (this.queue.length && this.admits(this.queue[0]!.alone)) this.queue.shift()!.enter();
  }
}
