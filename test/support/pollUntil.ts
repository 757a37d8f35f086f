// Waiting for a state another process or server reaches (a row, a key, a request received) that sends no
// event the test could wait on instead.

/**
 * Checks `condition` every 50 ms until it holds. The limit only names what never came, well before the
 * test's own timeout (vitest.config.ts); a loaded machine makes the wait longer, never a failure.
 */
export async function pollUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
