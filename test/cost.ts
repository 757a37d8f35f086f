// `npm run test:cost [-- stage ...]`: runs the vitest stages of `npm test` (default: unit, db:pglite,
// db:postgres, browser, embedded) with test/support/costSetup.ts recording each file's CPU time, then prints the
// files that cost the most CPU (TEST_COST_TOP, default 20). CPU rather than wall time, because the stages run
// side by side and a busy machine stretches every file's wall time, hardly its CPU time.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TOP = Number(process.env.TEST_COST_TOP || 20);
const stages = process.argv.slice(2).length ? process.argv.slice(2) : ['unit', 'db:pglite', 'db:postgres', 'browser', 'embedded'];

const dir = mkdtempSync(path.join(os.tmpdir(), 'lia-test-cost-'));
const costFile = path.join(dir, 'cost.jsonl');
const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/run.ts'), ...stages], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, TEST_COST_FILE: costFile },
});

interface Cost {
  file: string;
  project: string;
  database: string;
  cpuS: number;
  wallS: number;
}
let costs: Cost[] = [];
try {
  costs = readFileSync(costFile, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as Cost);
} catch {
  // no file finished
}
rmSync(dir, { recursive: true, force: true });
costs.sort((a, b) => b.cpuS - a.cpuS);
const total = costs.reduce((sum, cost) => sum + cost.cpuS, 0);
console.log(`\nCPU per test file (vitest worker, the processes it waited for, and Chromium's), top ${Math.min(TOP, costs.length)} of ${costs.length}; all files ${total.toFixed(1)} s:`);
console.log('| CPU s | wall s | project | database | file |\n|---:|---:|---|---|---|');
for (const cost of costs.slice(0, TOP)) {
  console.log(`| ${cost.cpuS.toFixed(1)} | ${cost.wallS.toFixed(1)} | ${cost.project} | ${cost.database} | ${cost.file} |`);
}
process.exit(run.status ?? 1);
