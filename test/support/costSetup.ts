// With TEST_COST_FILE set (`npm run test:cost`), each test file's CPU time is appended to that file as a line
// of JSON: the vitest worker's own time (PGlite's worker thread included) and that of the processes it
// started and waited for (child servers, Chromium), read from /proc because Node reads no child's usage, and
// that of Chromium's processes that no cutime receives (test/support/processCpu.ts). A PostgreSQL server's time
// is nobody's child here and is not counted.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll } from 'vitest';
import { selfCpuMs, unreapedCpuMs } from './processCpu.js';

const COST_FILE = process.env.TEST_COST_FILE;

const cpuMs = () => selfCpuMs() + unreapedCpuMs();

if (COST_FILE) {
  // Read as vitest runs this file before each test file, so the file's imports are counted too.
  const startCpuMs = cpuMs();
  const startMs = Date.now();
  // Registered first, so it runs after the file's own afterAll hooks (vitest runs them in reverse order):
  // the servers and browsers the file closes there are counted.
  afterAll(({}, suite) => {
    const line = {
      file: path.relative(process.cwd(), suite.file.filepath),
      project: suite.file.projectName,
      database: process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite',
      cpuS: (cpuMs() - startCpuMs) / 1000,
      wallS: (Date.now() - startMs) / 1000,
    };
    appendFileSync(COST_FILE, `${JSON.stringify(line)}\n`);
  });
}
