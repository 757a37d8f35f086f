import type { Knex } from 'knex';
import { errors } from '../errors.js';

/** Readiness: not draining, and the database answers a trivial query; 503 otherwise. */
export async function assertReady(db: Knex, draining: AbortSignal): Promise<void> {
  if (draining.aborted) throw errors.unavailable('this instance is shutting down; other instances take new clients');
  try {
    await db.raw('select 1');
  } catch {
    throw errors.unavailable('database unavailable');
  }
}
