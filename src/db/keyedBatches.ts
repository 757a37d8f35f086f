// Writes that must run one at a time per key (a session's messages: each locks the session's row),
// grouped. While a key's batch is in flight, what arrives for that key waits and then goes together, as
// one statement: a key that is idle costs nothing more than before, and a busy key takes its row lock
// and its commit once per batch instead of once per write. On PostgreSQL, 16 writers queueing on one row
// lock spent most of the database's CPU on waking one another (the measurements are in the README).
import { sqlStateOf } from './errors.js';

interface Waiting<Item, Result> {
  item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/**
 * `write` stores items of one key, all or none, and answers each item's result in order. A batch of
 * several that the database refuses (a value, a constraint: nothing was committed) is written again
 * one item at a time, in order, so that each item gets its own answer; any other failure reaches every
 * item of the batch.
 */
export class KeyedBatches<Item, Result> {
  private readonly queues = new Map<string, Array<Waiting<Item, Result>>>();

  constructor(
    private readonly write: (items: Item[]) => Promise<Result[]>,
    private readonly maxBatch: number,
  ) {}

  submit(key: string, item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) return void queue.push({ item, resolve, reject });
      this.queues.set(key, []);
      void this.drain(key, [{ item, resolve, reject }]);
    });
  }

  /** Writes `batch`, then what waited meanwhile, until the key has nothing waiting. */
  private async drain(key: string, batch: Array<Waiting<Item, Result>>): Promise<void> {
    const queue = this.queues.get(key)!;
    for (;;) {
      await this.writeBatch(batch);
      if (!queue.length) break;
      batch = queue.splice(0, this.maxBatch);
    }
    this.queues.delete(key);
  }

  private async writeBatch(batch: Array<Waiting<Item, Result>>): Promise<void> {
    try {
      const results = await this.write(batch.map((waiting) => waiting.item));
      batch.forEach((waiting, i) => waiting.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1 || !refusedWithoutEffect(error)) return batch.forEach((waiting) => waiting.reject(error));
      for (const waiting of batch) await this.writeBatch([waiting]);
    }
  }
}

/** PostgreSQL refused a value, a constraint or a value's size (SQLSTATE classes 22, 23, 54): the statement changed nothing. */
const refusedWithoutEffect = (error: unknown) => /^(22|23|54)/.test(sqlStateOf(error) ?? '');
