import type { Knex } from 'knex';
import { errors } from '../errors.js';

/** Readiness: the database answers a trivial query, or 503. */
export async function assertDatabaseReady(db: Knex): Promise<void> {
  try {
    await db.raw('select 1');
  } catch {
    throw errors.unavailable('database unavailable');
  }
}
