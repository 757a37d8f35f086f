// Set up for every test file (vitest.config.ts): a test that fails, its own limit reached included,
// says what it was still waiting for (./waiting.ts), and no wait outlives its test or its file.
import { afterAll, afterEach } from 'vitest';
import { pendingWaits, stopPendingWaits } from './waiting.js';

// afterEach runs once the test's result is known (vitest sets it before its afterEach hooks).
afterEach(({ task }) => {
  const waits = pendingWaits();
  if (waits.length && task.result?.state === 'fail') console.error(`${task.name}: still waiting for ${waits.join('; ')}`);
  stopPendingWaits();
});
afterAll(stopPendingWaits);
