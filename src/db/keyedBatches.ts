// Work that runs one batch at a time per key, grouped. While a key's batch is in flight, what arrives for
// that key waits and then goes together, as one statement: a key that is idle costs nothing more than
// before, and a busy key costs a statement per group instead of one per request. A session's messages
// (each statement locks the session's row: on PostgreSQL, 16 writers queueing on one row lock spent most
// of the database's CPU on waking one another; the measurements are in docs/performance.md), and the reads of
// one row (./sharedReads.ts: a read shared by a group still starts after each of its requests arrived).
import type { Knex } from 'knex';
import { sqlStateOf } from './errors.js';

interface Waiting<Item, Result> {
  item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/**
 * `run` does the work of a batch of one key's items in one statement (all or none) and answers each
 * item's result in order. A batch of several that the database refuses (a value, a constraint: nothing
 * was committed) is run again one item at a time, in order, so that each item gets its own answer; any
 * other failure reaches every item of the batch.
 */
export class KeyedBatches<Item, Result> {
  private readonly queues = new Map<string, Array<Waiting<Item, Result>>>();
  /** Keys whose first batch is still gathering (only with `gatherMs`). */
  private readonly gathering = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly run: (items: Item[]) => Promise<Result[]>,
    private readonly maxBatch: number,
    /**
     * How long an idle key's first item waits for others before its statement starts (default none).
     * For work that comes from many sources at once and waits for no answer, where a statement costs
     * much more than an item.
     */
    private readonly gatherMs = 0,
  ) {}

  submit(key: string, item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const waiting = { item, resolve, reject };
      const queue = this.queues.get(key);
      if (queue) {
        queue.push(waiting);
        if (queue.length >= this.maxBatch && this.gathering.has(key)) this.start(key);
        return;
      }
      if (!this.gatherMs) {
        this.queues.set(key, []);
        return void this.drain(key, [waiting]);
      }
      this.queues.set(key, [waiting]);
      this.gathering.set(key, setTimeout(() => this.start(key), this.gatherMs));
    });
  }

  /** The gathering of a key's first batch is over: it runs. */
  private start(key: string): void {
    clearTimeout(this.gathering.get(key));
    this.gathering.delete(key);
    void this.drain(key, this.queues.get(key)!.splice(0, this.maxBatch));
  }

  /** Runs `batch`, then what waited meanwhile (at once), until the key has nothing waiting. */
  private async drain(key: string, batch: Array<Waiting<Item, Result>>): Promise<void> {
    const queue = this.queues.get(key)!;
    for (;;) {
      await this.runBatch(batch);
      if (!queue.length) break;
      batch = queue.splice(0, this.maxBatch);
    }
    this.queues.delete(key);
  }

  private async runBatch(batch: Array<Waiting<Item, Result>>): Promise<void> {
    try {
      const results = await this.run(batch.map((waiting) => waiting.item));
      batch.forEach((waiting, i) => waiting.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1 || !refusedWithoutEffect(error)) return batch.forEach((waiting) => waiting.reject(error));
      for (const waiting of batch) await this.runBatch([waiting]);
    }
  }
}

/** One value per database handle (a process may hold several: tests, the bench), made on first use. */
export function perDatabase<Value>(make: (db: Knex) => Value): (db: Knex) => Value {
  const values = new WeakMap<Knex, Value>();
  return (db) => {
    let value = values.get(db);
    if (value === undefined) values.set(db, (value = make(db)));
    return value;
  };
}

/** PostgreSQL refused a value, a constraint or a value's size (SQLSTATE classes 22, 23, 54): the statement changed nothing. */
const refusedWithoutEffect = (error: unknown) => /^(22|23|54)/.test(sqlStateOf(error) ?? '');
