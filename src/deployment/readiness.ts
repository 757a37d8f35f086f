import type { Knex } from 'knex';
import { errors } from '../errors.js';
import type { components } from '../generated/api.js';
import type { RedisAvailability } from './redis.js';

export type Readiness = components['schemas']['ReadinessOut'];

/**
 * Readiness: not draining, and the database answers a trivial query; 503 otherwise. An instance whose
 * shared Redis is away still serves (degraded), so it stays ready, saying what it serves without.
 */
export async function readiness(db: Knex, draining: AbortSignal, redis: RedisAvailability | null): Promise<Readiness> {
  if (draining.aborted) throw errors.unavailable('this instance is shutting down; other instances take new clients');
  try {
    await db.raw('select 1');
  } catch {
    throw errors.unavailable('database unavailable');
  }
  return redis && !redis.available ? { status: 'degraded', degraded: ['redis'] } : { status: 'ok' };
}
