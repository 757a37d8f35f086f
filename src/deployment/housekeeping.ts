// Housekeeping that runs inside the server on a timer, once per period for the whole deployment:
// every instance's timer asks, and the one that takes the job's advisory lock and finds the period
// over since the last run (job_runs) runs it; the others skip. Every job is idempotent anyway.
import type { Knex } from 'knex';
import { purgeStaleLinks } from '../members/links.js';
import { purgeExpiredMemberSessions } from '../members/sessions.js';
import { purgeExpiredChallenges } from '../members/twoFactor.js';
import { purgeExpiredIdempotencyKeys } from '../idempotency/idempotency.js';
import { eraseExpiredData } from '../sessions/retention.js';
import { announceOverdueTranscripts, eraseExpiredTranscripts, TRANSCRIPT_READY_GRACE_MS } from '../calls/transcripts.js';
import { forgetExpiredSecrets } from '../webhooks/endpoints.js';
import type { Config } from '../config.js';
import type { EventBus } from '../events/bus.js';
import type { Logger } from 'pino';

const HOUSEKEEPING = 'housekeeping';
/** pg_try_advisory_xact_lock's key of the housekeeping job (any fixed number, unique in the database). */
const HOUSEKEEPING_LOCK = 7_304_152_001;
/** A run a little early still counts: instances' timers drift apart. */
const PERIOD_SLACK = 0.9;
/** Overdue transcripts are looked for among calls that ended in the last this many periods (one run missed is caught up). */
const OVERDUE_PERIODS = 2;

type HousekeepingApp = { db: Knex; events: EventBus; logger: Logger; now: () => number; config: Config };

/**
 * Claims this period's run of job `name` for this instance: true when no other instance holds it and
 * the last run is at least a period ago (then recorded as now). Never waits for another instance.
 */
export async function claimJobRun(db: Knex, name: string, lockKey: number, periodMs: number, nowMs: number): Promise<boolean> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: Array<{ locked: boolean }> }>('select pg_try_advisory_xact_lock(?) as locked', [lockKey]);
    if (!rows[0]?.locked) return false;
    const last = await trx('job_runs').where({ name }).first('last_run_at');
    if (last && nowMs - new Date(last.last_run_at).getTime() < periodMs * PERIOD_SLACK) return false;
    await trx('job_runs').insert({ name, last_run_at: new Date(nowMs) }).onConflict('name').merge();
    return true;
  });
}

/** Runs the housekeeping if this instance claims this period's run; true when it ran. */
export async function runHousekeeping(app: HousekeepingApp): Promise<boolean> {
  const now = app.now();
  if (!(await claimJobRun(app.db, HOUSEKEEPING, HOUSEKEEPING_LOCK, app.config.jobIntervalMs, now))) return false;
  const purged = await purgeExpiredIdempotencyKeys(app.db);
  const erased = await eraseExpiredData(app.db);
  const utterances = await eraseExpiredTranscripts(app.db);
  const memberSessions = await purgeExpiredMemberSessions(app.db, app.now());
  const memberLinks = await purgeStaleLinks(app.db, app.now());
  const signInChallenges = await purgeExpiredChallenges(app.db, app.now());
  const webhookSecrets = await forgetExpiredSecrets(app.db, app.now());
  app.logger.info({ idempotencyKeys: purged, memberSessions, memberLinks, signInChallenges, webhookSecrets, utterances, ...erased }, 'expired data erased');
  const transcriptsReady = await announceOverdueTranscripts(app, now - TRANSCRIPT_READY_GRACE_MS - OVERDUE_PERIODS * app.config.jobIntervalMs, now);
  if (transcriptsReady) app.logger.info({ calls: transcriptsReady }, 'transcripts no instance said were ready announced');
  return true;
}

export function startPeriodicJobs(app: HousekeepingApp): () => void {
  const timer = setInterval(() => {
    runHousekeeping(app).catch((err) => app.logger.error({ err }, 'periodic job failed'));
  }, app.config.jobIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
