// Waiting for a state a test cannot be told of by an event (a row, a key, a count in another process):
// the condition is checked again and again, with no deadline of its own. A loaded machine makes such a
// wait longer, never a failure; what bounds a wait that never ends is the test's own limit
// (vitest.config.ts), and then ./waitsSetup.ts says what the test was still waiting for and stops the
// wait, so nothing goes on polling into the next test. Where a client is told of what arrives (a socket's
// messages, a stream's events), wait on that instead (../media/support.ts `Arrivals`, ./sse.ts).

/** How often a condition is asked again: a pause between checks, not a limit. */
const CHECK_EVERY_MS = 10;

interface PendingWait {
  describe: () => string;
  stop: () => void;
}

const pending = new Set<PendingWait>();

/**
 * Registers a wait in progress: `describe` says what it waits for (asked only if the test fails), `stop`
 * ends it without settling its promise (its test is over). Returns what to call when the wait is done.
 */
export function trackWait(describe: () => string, stop: () => void): () => void {
  const wait = { describe, stop };
  pending.add(wait);
  return () => pending.delete(wait);
}

/** What the waits still under way wait for. */
export const pendingWaits = (): string[] => [...pending].map((wait) => wait.describe());

/** Ends every wait still under way (their test is over). */
export function stopPendingWaits(): void {
  for (const wait of pending) wait.stop();
  pending.clear();
}

/** Resolves once `check` holds; checked now and every CHECK_EVERY_MS until then. */
export function waitUntil(check: () => boolean | Promise<boolean>, what = 'a condition'): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const done = trackWait(
      () => what,
      () => {
        stopped = true;
        clearTimeout(timer);
      },
    );
    const attempt = async () => {
      try {
        if (await check()) {
          done();
          return resolve();
        }
      } catch (err) {
        done();
        return reject(err);
      }
      if (!stopped) timer = setTimeout(attempt, CHECK_EVERY_MS);
    };
    void attempt();
  });
}
