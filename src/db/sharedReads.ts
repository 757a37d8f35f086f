// Reads of one row outside a transaction, shared by the requests that ask for it while the previous read
// of it is in flight (./keyedBatches.ts): they wait for it and then share the next read, so every answer
// was still read after its request arrived (joining the read in flight could miss a change its client
// had already been told of). Under load on one row (16 clients posting into one session, polling one
// call, reading their account) that is one statement per group instead of one per request.
import type { Knex } from 'knex';
import { KeyedBatches, perDatabase } from './keyedBatches.js';

type Read = () => Promise<object | undefined>;

const SHARED_READS_MAX = 1_000;

const sharedReadsOf = perDatabase(
  () =>
    new KeyedBatches<Read, object | undefined>(async (reads) => {
      const row = await reads[0]!();
      // Each caller gets its own copy.
      return reads.map(() => row && { ...row });
    }, SHARED_READS_MAX),
);

/**
 * The row `read` finds, shared with the callers asking for the same `key` at the same time; in a
 * transaction, read alone (the transaction's own view). `key` names the row across every kind of row
 * read this way (e.g. `table\0id`), and every read under one key must read the same row.
 */
export function readShared<Row extends object>(db: Knex, key: string, read: () => Promise<Row | undefined>): Promise<Row | undefined> {
  if (db.isTransaction) return read();
  return sharedReadsOf(db).submit(key, read) as Promise<Row | undefined>;
}
