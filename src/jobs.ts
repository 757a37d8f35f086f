// Housekeeping that runs inside the server on a timer. Every job is idempotent, so several instances
// running it at once do no harm.
import type { AppContext } from './appContext.js';
import { purgeExpiredMemberSessions } from './members/sessions.js';
import { purgeExpiredIdempotencyKeys } from './services/idempotency.js';
import { eraseExpiredData } from './sessions/retention.js';

// Retention is counted in days; erasing within the hour is soon enough.
const HOUR_MS = 60 * 60 * 1000;

export function startPeriodicJobs(app: AppContext, everyMs = HOUR_MS): () => void {
  const run = async () => {
    try {
      const purged = await purgeExpiredIdempotencyKeys(app.db);
      const erased = await eraseExpiredData(app.db);
      const memberSessions = await purgeExpiredMemberSessions(app.db, app.now());
      app.logger.info({ idempotencyKeys: purged, memberSessions, ...erased }, 'expired data erased');
    } catch (err) {
      app.logger.error({ err }, 'periodic job failed');
    }
  };
  const timer = setInterval(run, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
