// Server instances sharing one database. Each registers a row with a lease its heartbeat renews; the
// reservations and running Idempotency-Keys of its requests carry its id. An instance whose lease ran
// out (killed, frozen, cut off) is dead: the holds it left are released and its running keys freed, so
// money is never locked and a retry is never refused (409) for a request that can no longer finish.
import { hostname } from 'node:os';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { newId } from '../lib/ids.js';
import { releaseOrphanedHolds } from '../money/index.js';
import { forgetRequestsOfDeadInstances } from '../idempotency/idempotency.js';

/** An instance is taken for dead after missing this many heartbeats in a row. */
export const MISSED_HEARTBEATS = 3;

export interface InstanceOptions {
  heartbeatMs: number;
  /**
   * The database is this process's alone (PGlite, guarded by the DATA_DIR lock): every other instance
   * on record is dead, so their leftovers are released at once, whatever their leases say.
   */
  soleInstance: boolean;
  logger: Logger;
}

export interface RunningInstance {
  readonly id: string;
  /** Stops the heartbeat and deregisters: what the instance still held is released. */
  stop(): Promise<void>;
}

const leaseSeconds = (heartbeatMs: number) => (heartbeatMs * MISSED_HEARTBEATS) / 1000;

export async function startInstance(db: Knex, options: InstanceOptions): Promise<RunningInstance> {
  const id = newId('inst');
  const lease = leaseSeconds(options.heartbeatMs);
  const register = () =>
    db('instances')
      .insert({ id, host: hostname(), pid: process.pid, expires_at: db.raw('now() + make_interval(secs => ?)', [lease]) })
      .onConflict('id')
      .merge(['expires_at']);
  await register();
  await reapDeadInstances(db, options.soleInstance ? id : undefined, options.logger);

  let beating: Promise<void> = Promise.resolve();
  const beat = async () => {
    try {
      // A frozen instance that was taken for dead comes back under the same id.
      await register();
      await reapDeadInstances(db, undefined, options.logger);
    } catch (err) {
      options.logger.warn({ err }, 'instance heartbeat failed');
    }
  };
  const timer = setInterval(() => {
    beating = beating.then(beat);
  }, options.heartbeatMs);
  timer.unref();

  return {
    id,
    async stop() {
      clearInterval(timer);
      await beating;
      await db('instances').where({ id }).del();
      await reapDeadInstances(db, undefined, options.logger);
    },
  };
}

/**
 * Releases what dead instances left: holds, running Idempotency-Keys, their rows. `soleInstance`
 * declares every instance but that one dead.
 */
export async function reapDeadInstances(db: Knex, soleInstance: string | undefined, logger: Logger): Promise<void> {
  const holds = await releaseOrphanedHolds(db, { soleInstance });
  const keys = await forgetRequestsOfDeadInstances(db, soleInstance);
  const dead = soleInstance
    ? db('instances').whereNot({ id: soleInstance })
    : db('instances').where('expires_at', '<', db.fn.now());
  const instances = await dead.del();
  if (holds || keys || instances) {
    logger.info({ holds, idempotencyKeys: keys, instances }, 'released what dead server instances left');
  }
}
