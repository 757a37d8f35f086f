// A vitest reporter for test/run.ts, beside the default one: it writes a byte to the file descriptor named by
// TEST_PROGRESS_FD each time a test or hook finishes. That is how the runner tells a stage that is slow
// (a long file on a loaded machine, still finishing tests) from one that is stuck.
import { writeSync } from 'node:fs';
import type { Reporter } from 'vitest/node';

const fd = Number(process.env.TEST_PROGRESS_FD) || undefined;

function finished(): void {
  if (fd === undefined) return;
  try {
    writeSync(fd, '.');
  } catch {
    // The runner is gone or not listening: progress is only a hint for it.
  }
}

export default class StageProgress implements Reporter {
  onTestCaseResult = finished;
  onHookEnd = finished;
}
