// `npm test`: every check of the project, as stages that run side by side where that is faster on a small
// machine, and a summary of every stage's result and time at the end, also when one failed.
//
//   node --import tsx test/run.ts [stage ...]      default: every stage; e.g. `npm test -- unit db:pglite`
//
// Stages: codegen (generated files match the contract), typecheck, imports (the import graph stays
// layered: .dependency-cruiser.cjs), unit (the unit tests, once), db:pglite (database tests on PGlite),
// db:postgres (database tests on PostgreSQL), browser (Chromium against the pages, with PostgreSQL), embedded
// (the embedded database on disk: npm start and its lock), contract (Dredd against the real server). The
// prerequisites of the chosen stages (PostgreSQL, Chromium, Redis, nginx) are checked first: when one is missing,
// nothing runs and the runner says what is missing and how to get it.
//
// Environment: TEST_DATABASE_URL (PostgreSQL whose role may create databases; default the local
// server's `postgres` database), CHROMIUM_PATH (default /usr/bin/chromium), TEST_REDIS_URL (default
// redis://127.0.0.1:6379), NGINX_PATH (default /usr/sbin/nginx), TEST_STAGE_STUCK_MS (how long a stage may go without
// any progress before it is stopped as stuck; default 10 min).
//
// No stage has a limit on its length: a loaded machine makes the suite slower, not red. Tests and hooks have
// their own generous limits (vitest.config.ts); a stage is stopped only when it shows no progress at all for
// TEST_STAGE_STUCK_MS: no line of output and, in a vitest stage, no test or hook finished.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const POSTGRES_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const NGINX_PATH = process.env.NGINX_PATH || '/usr/sbin/nginx';
const STAGE_STUCK_MS = Number(process.env.TEST_STAGE_STUCK_MS || 10 * 60_000);
const TYPECHECK_STATE = path.join(os.tmpdir(), `lia-typecheck-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.tsbuildinfo`);

// ---- prerequisites -----------------------------------------------------------------------------

interface Prerequisite {
  name: string;
  /** What is wrong and how to fix it, or null when the prerequisite is there. */
  problem(): Promise<string | null>;
}

const postgres: Prerequisite = {
  name: 'PostgreSQL',
  async problem() {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5_000 });
    try {
      await client.connect();
      const { rows } = await client.query('select current_user as role, rolcreatedb or rolsuper as may_create from pg_roles where rolname = current_user');
      if (rows[0]?.may_create) return null;
      return `role ${rows[0]?.role} of ${redact(POSTGRES_URL)} may not create databases (each test file gets its own): ALTER ROLE ${rows[0]?.role} CREATEDB, or set TEST_DATABASE_URL to a role that may.`;
    } catch (err) {
      return (
        `${redact(POSTGRES_URL)} did not answer (${(err as Error).message}). Start a local server (Debian: apt-get install postgresql, ` +
        `then pg_ctlcluster <version> main start; the tests connect as postgres without a password), or set TEST_DATABASE_URL ` +
        `to a server whose role may create databases. .ci/run sets up both.`
      );
    } finally {
      await client.end().catch(() => undefined);
    }
  },
};

/** A program the tests run, found at `file` or missing with `advice`. */
const executable = (name: string, file: string, advice: string): Prerequisite => ({
  name,
  async problem() {
    try {
      await access(file, constants.X_OK);
      return null;
    } catch {
      return `${file} is missing or not executable ${advice}`;
    }
  },
});

const chromium = executable(
  'Chromium',
  CHROMIUM_PATH,
  "(the browser tests drive it). Install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary (the tests never download a browser).",
);

const nginx = executable(
  'nginx',
  NGINX_PATH,
  "(the several-instances test puts it in front of two servers). Install Debian's nginx-light (apt-get install nginx-light) or set NGINX_PATH.",
);

const redis: Prerequisite = {
  name: 'Redis',
  async problem() {
    const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 5_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    let cause: Error | undefined; // the socket's own error says more than the "connection is closed" that follows
    client.on('error', (err: Error) => (cause ??= err));
    try {
      await client.connect();
      await client.ping();
      return null;
    } catch (err) {
      return (
        `${redact(REDIS_URL)} did not answer PING (${(cause ?? (err as Error)).message}); the Redis rate-limit store tests need it. ` +
        `Start one (Debian: apt-get install redis-server, then redis-server --daemonize yes --port 6379 --save ""), or set TEST_REDIS_URL.`
      );
    } finally {
      client.disconnect();
    }
  },
};

/** A URL as it may be printed: without its password. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

// ---- stages ------------------------------------------------------------------------------------

interface Stage {
  name: string;
  command: string[];
  env?: NodeJS.ProcessEnv;
  needs: Prerequisite[];
  /** The line of the stage's output that sums it up in the report. */
  summary?: RegExp;
}

const node = (script: string, ...args: string[]) => [process.execPath, '--import', 'tsx', script, ...args];
// The second reporter tells the runner each time a test or hook finishes (PROGRESS_FD), so that a long file
// on a slow machine counts as progress.
const vitest = (...args: string[]) => [
  process.execPath,
  path.join(ROOT, 'node_modules/vitest/vitest.mjs'),
  'run',
  '--reporter=default',
  '--reporter=./test/support/stageProgress.ts',
  ...args,
];
const VITEST_SUMMARY = /^\s*Tests\s+.*\(\d+\)\s*$/m;

const STAGES: Stage[] = [
  { name: 'codegen', command: node('codegen/check.ts'), needs: [] },
  {
    name: 'typecheck',
    // TypeScript 7, the native compiler: the same checks as 5.9 (kept for openapi-typescript) in a fifth of
    // the CPU (46 -> 9 s). Incremental: a run after the first checks again what changed since (about 3 s),
    // and tsc reports the errors it remembers; the state file lives outside the checkout, one per checkout.
    command: [process.execPath, path.join(ROOT, 'node_modules/typescript-native/bin/tsc'), '-p', '.', '--incremental', '--tsBuildInfoFile', TYPECHECK_STATE],
    needs: [],
  },
  {
    name: 'imports',
    command: [process.execPath, path.join(ROOT, 'scripts/checkImports.mjs')],
    needs: [],
    summary: /^.*import layering.*$/m,
  },
  { name: 'unit', command: vitest('--project', 'unit'), needs: [redis], summary: VITEST_SUMMARY },
  {
    name: 'db:pglite',
    command: vitest('--project', 'db', '--maxWorkers=1'),
    env: { TEST_DATABASE_URL: undefined },
    needs: [],
    summary: VITEST_SUMMARY,
  },
  {
    name: 'db:postgres',
    command: vitest('--project', 'db', '--maxWorkers=1'),
    env: { TEST_DATABASE_URL: POSTGRES_URL },
    needs: [postgres, redis, nginx],
    summary: VITEST_SUMMARY,
  },
  {
    // The pages are the same on either database: once, with PostgreSQL (vitest.config.ts).
    name: 'browser',
    command: vitest('--project', 'browser', '--maxWorkers=2'),
    env: { TEST_DATABASE_URL: POSTGRES_URL },
    needs: [postgres, chromium],
    summary: VITEST_SUMMARY,
  },
  { name: 'embedded', command: vitest('--project', 'embedded', '--maxWorkers=2'), env: { TEST_DATABASE_URL: undefined }, needs: [], summary: VITEST_SUMMARY },
  { name: 'contract', command: node('contract-tests/run.ts'), needs: [], summary: /^\[contract\] summary: .*$/m },
];

/**
 * What runs beside what: each lane runs its stages one after the other, the lanes run at the same time. The suite
 * keeps both cores busy for most of its length (a sampler of /proc/stat read 99 % busy until the database lanes run
 * alone, docs/testing.md), so what decides its length is the CPU time of all lanes together; the lanes only have to
 * end at about the same time. Each database
 * stage has one vitest worker: a second costs a worker's start and warm-up (PostgreSQL's stage alone: 132 s of the
 * machine's CPU with one, 146 s with two). The browser stage has two (Chromium's processes are most of its CPU) and
 * its own lane: with the PostgreSQL tests in one stage it would start last and end alone, long after the others.
 */
const LANES: string[][] = [['db:pglite'], ['db:postgres'], ['browser'], ['codegen', 'typecheck', 'imports', 'unit', 'embedded', 'contract']];
for (const stage of STAGES) if (!LANES.flat().includes(stage.name)) throw new Error(`stage ${stage.name} is in no lane`);

// ---- running -----------------------------------------------------------------------------------

interface Result {
  stage: Stage;
  status: 'passed' | 'FAILED' | 'stuck' | 'stopped';
  ms: number;
  /** CPU time (user and system) of the stage's processes, which a loaded machine changes less than `ms`. */
  cpuMs?: number;
  detail: string;
  /** What failed, repeated at the very end: a log that keeps only its tail still names it. */
  failures: string[];
}

const running = new Set<number>();

/** The file descriptors a stage's processes report on, besides its output. */
const PROGRESS_FD = 3;
const TIMES_FD = 4;

/**
 * Every Node process of a stage (vitest's workers, the servers tests start, Dredd, Prism) gets semi-spaces of
 * 32 MiB instead of V8's 16 (a young generation twice as large): tests allocate much that lives briefly, and
 * fewer scavenges promote less of it. The PGlite stage alone: 124-127 s of CPU instead of 131-137 (64 MiB: 130 s).
 * Not for the server in production: there a larger young generation made full collections more frequent
 * (docs/performance.md).
 */
const NODE_OPTIONS = [process.env.NODE_OPTIONS, '--max-semi-space-size=32'].filter(Boolean).join(' ');

function runStage(stage: Stage): Promise<Result> {
  const started = Date.now();
  console.log(`[run] ${stage.name}: started`);
  const env: NodeJS.ProcessEnv = { ...process.env, ...stage.env, TEST_PROGRESS_FD: String(PROGRESS_FD), NODE_OPTIONS };
  for (const [name, value] of Object.entries(stage.env ?? {})) if (value === undefined) delete env[name];
  if (process.stdout.isTTY) env.FORCE_COLOR ??= '1';
  // The shell waits for the stage and then prints, with `times`, the CPU time of every process the stage
  // ran and waited for (Node cannot read a child's resource usage).
  const command = ['/bin/sh', '-c', `"$@"; status=$?; times >&${TIMES_FD}; exit $status`, 'sh', ...stage.command];
  // Its own process group, so a stuck stage or Ctrl-C stops everything the stage started.
  const child = spawn(command[0], command.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'], detached: true });
  running.add(child.pid!);
  let stuck = false;
  const watchdog = setTimeout(() => {
    stuck = true;
    killGroup(child.pid!);
  }, STAGE_STUCK_MS);
  const output: Buffer[] = [];
  let times = '';
  const outputArrived = (chunk: Buffer) => {
    output.push(chunk);
    watchdog.refresh();
  };
  child.stdout!.on('data', outputArrived);
  child.stderr!.on('data', outputArrived);
  child.stdio[PROGRESS_FD]!.on('data', () => watchdog.refresh());
  child.stdio[TIMES_FD]!.on('data', (chunk: Buffer) => (times += chunk));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      running.delete(child.pid!);
      const ms = Date.now() - started;
      const text = Buffer.concat(output).toString();
      const status = stuck ? 'stuck' : stopping ? 'stopped' : code === 0 ? 'passed' : 'FAILED';
      const summary = stage.summary?.exec(stripAnsi(text))?.[0].trim().replace(/\s+/g, ' ');
      const detail = [
        stuck && `no progress for ${seconds(STAGE_STUCK_MS)}: stopped`,
        summary,
        status !== 'passed' && `exit ${code ?? signal}`,
      ]
        .filter(Boolean)
        .join('; ');
      const shown = text.trim() ? text.replace(/\n?$/, '\n') : '(no output)\n';
      const cpuMs = childrenCpuMs(times);
      process.stdout.write(`\n===== ${stage.name}: ${status} in ${seconds(ms)}${cpuMs === undefined ? '' : `, CPU ${seconds(cpuMs)}`} =====\n${shown}===== end of ${stage.name} =====\n\n`);
      resolve({ stage, status, ms, cpuMs, detail, failures: status === 'passed' ? [] : failuresIn(stripAnsi(text)) });
    });
  });
}

/**
 * The lines that name what failed: vitest's failed tests and files (`FAIL`, `×`) with the first line
 * of each error, Dredd's `fail:` lines, and any `Error` a stage printed; at most 40.
 */
function failuresIn(text: string): string[] {
  const lines = text.split('\n');
  const picked = new Set<string>();
  lines.forEach((line, i) => {
    if (/^\s*(FAIL|×|✗|fail:)\s/.test(line)) {
      picked.add(line.trim());
      const error = lines.slice(i + 1, i + 8).find((next) => /(Error|expected|Timeout|timed out)/i.test(next));
      if (error) picked.add(`    ${error.trim()}`);
    }
  });
  if (!picked.size) for (const line of lines) if (/\bError\b/.test(line)) picked.add(line.trim());
  return [...picked].slice(0, 40);
}

/** The user and system time of the children in the output of the shell's `times` (its second line: "0m41.630000s 0m5.120000s"). */
function childrenCpuMs(times: string): number | undefined {
  const spent = [...(times.split('\n')[1] ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map(([, minutes, secs]) => (Number(minutes) * 60 + Number(secs)) * 1000);
  return spent.length === 2 ? spent[0] + spent[1] : undefined;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopping = true;
    console.log(`[run] ${signal}: stopping every stage`);
    for (const pid of running) killGroup(pid);
  });
}

const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** The machine's load over the last 1, 5 and 15 minutes: what else ran beside the stages, which their times depend on. */
const loadAverage = () => os.loadavg().map((load) => load.toFixed(1)).join(' ');

async function main(): Promise<number> {
  const started = Date.now();
  const asked = process.argv.slice(2);
  const unknown = asked.filter((name) => !STAGES.some((stage) => stage.name === name));
  if (unknown.length) {
    console.error(`unknown stage ${unknown.join(', ')}; the stages are ${STAGES.map((stage) => stage.name).join(', ')}`);
    return 2;
  }
  const chosen = STAGES.filter((stage) => !asked.length || asked.includes(stage.name));

  const prerequisites = [...new Set(chosen.flatMap((stage) => stage.needs))];
  const problems = (await Promise.all(prerequisites.map(async (p) => ({ p, problem: await p.problem() })))).filter((x) => x.problem);
  if (problems.length) {
    console.error(`npm test cannot start: ${problems.length === 1 ? 'a prerequisite is' : 'prerequisites are'} missing.`);
    for (const { p, problem } of problems) {
      const stages = chosen.filter((stage) => stage.needs.includes(p)).map((stage) => stage.name);
      console.error(`  ${p.name} (needed by ${stages.join(', ')}): ${problem}`);
    }
    return 1;
  }
  console.log(`[run] prerequisites there: ${prerequisites.map((p) => p.name).join(', ') || 'none needed'}; load average ${loadAverage()}`);

  const results: Result[] = [];
  await Promise.all(
    LANES.map(async (lane) => {
      for (const stage of chosen.filter((s) => lane.includes(s.name))) {
        if (stopping) break;
        results.push(await runStage(stage));
      }
    }),
  );

  const failed = chosen.filter((stage) => results.find((r) => r.stage === stage)?.status !== 'passed');
  const cpuMs = results.reduce((sum, result) => sum + (result.cpuMs ?? 0), 0);
  console.log(
    `npm test: ${failed.length ? `FAILED (${failed.map((s) => s.name).join(', ')})` : 'passed'} in ${seconds(Date.now() - started)}, ` +
      `CPU ${seconds(cpuMs)} (load average ${loadAverage()})`,
  );
  for (const stage of chosen) {
    const result = results.find((r) => r.stage === stage);
    const status = result?.status ?? 'not run';
    const cpu = result?.cpuMs === undefined ? '' : `CPU ${seconds(result.cpuMs)}`;
    console.log(`  ${stage.name.padEnd(12)} ${status.padEnd(9)} ${(result ? seconds(result.ms) : '').padStart(8)} ${cpu.padStart(12)}  ${result?.detail ?? ''}`);
  }
  for (const result of results) {
    if (!result.failures.length) continue;
    console.log(`\n${result.stage.name} failed on:\n  ${result.failures.join('\n  ')}`);
  }
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    for (const pid of running) killGroup(pid);
    process.exit(1);
  },
);
