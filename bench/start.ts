// npm run bench:start [-- --db pglite|postgres|both] [--reps 3] [--idle 10] [--quick]
//
// Start-up and memory (issue 13): the project's server spawned as `npm start` runs it, timed from spawn
// to the first 200 of /healthz, and its resident memory `--idle` seconds later, for PGlite with a fresh
// data directory, PGlite with an existing one, and PostgreSQL with an existing database, beside a bare
// Express hello-world, repetitions interleaved (medians and min-max). Then what each heavy part costs
// loaded alone in a fresh process, the language detection's quality (bench/detect.ts), and the goals.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { freePort } from '../test/support/freePort.js';
import { detectionReport } from './detect.js';
import { createBenchDatabase, type BenchDatabase } from './support/databases.js';
import { formatGoals } from './support/goals.js';
import { machineLine } from './support/machine.js';
import { PROBES } from './support/moduleProbe.js';
import { backends, positiveInteger } from './support/options.js';
import { BENCH_DIR, ROOT, serverEnv, startServerProcess } from './support/serverProcess.js';
import {
  formatProbes,
  formatStarts,
  startGoals,
  summarizeStarts,
  type ProbeSample,
  type StartConfig,
  type StartSample,
  type StartSummary,
} from './support/startReport.js';
import { readStartScripts, runPrestart, type StartCommand } from './support/startCommand.js';

const { values: flags } = parseArgs({
  options: {
    db: { type: 'string' },
    reps: { type: 'string' },
    idle: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
const REPS = positiveInteger('reps', flags.reps, flags.quick ? 1 : 3);
const IDLE_S = positiveInteger('idle', flags.idle, flags.quick ? 2 : 10);
const BACKENDS = backends(flags.db);

/** Spawns, times the start-up, waits idle, reads the RSS, stops. */
async function sample(name: string, nodeArgs: string[], env: Record<string, string>, readyPath: string, workDir: string): Promise<StartSample> {
  const server = await startServerProcess({
    name,
    nodeArgs,
    env: serverEnv({ ...env, HOST: '127.0.0.1', AUDIOSOCKET_PORT: String(await freePort()) }),
    readyPath,
    logFile: path.join(workDir, `${name.replace(/\W+/g, '-')}.log`),
    measureLoop: false,
  });
  try {
    await sleep(IDLE_S * 1000);
    return { startMs: server.startMs, rss: await server.rss() };
  } finally {
    await server.stop();
  }
}

async function startUps(start: StartCommand, workDir: string): Promise<Partial<Record<StartConfig, StartSummary>>> {
  const samples = new Map<StartConfig, StartSample[]>();
  const add = (config: StartConfig, s: StartSample) => {
    samples.set(config, [...(samples.get(config) ?? []), s]);
    console.log(`  ${config}: ${(s.startMs / 1000).toFixed(2)} s, ${Math.round(s.rss / 1024 / 1024)} MiB`);
  };
  let postgres: BenchDatabase | undefined;
  try {
    if (BACKENDS.includes('postgres')) {
      postgres = await createBenchDatabase('postgres', workDir);
      // The first start migrates and bootstraps: "existing database" is every start after it.
      await sample('PostgreSQL first start', start.nodeArgs, { ...start.env, ...postgres.env }, '/healthz', workDir);
    }
    for (let rep = 1; rep <= REPS; rep++) {
      console.log(`rep ${rep}/${REPS} (each server idle ${IDLE_S} s before its RSS is read)`);
      add('bare Express', await sample('bare Express', [path.join(BENCH_DIR, 'support', 'bareExpress.mjs')], {}, '/', workDir));
      if (BACKENDS.includes('pglite')) {
        const lite = await createBenchDatabase('pglite', workDir);
        try {
          const env = { ...start.env, ...lite.env };
          add('PGlite, fresh data dir', await sample('PGlite fresh', start.nodeArgs, env, '/healthz', workDir));
          add('PGlite, existing data dir', await sample('PGlite existing', start.nodeArgs, env, '/healthz', workDir));
        } finally {
          await lite.drop();
        }
      }
      if (postgres) {
        add('PostgreSQL, existing database', await sample('PostgreSQL', start.nodeArgs, { ...start.env, ...postgres.env }, '/healthz', workDir));
      }
    }
  } finally {
    await postgres?.drop();
  }
  return Object.fromEntries([...samples].map(([config, s]) => [config, summarizeStarts(s)]));
}

const run = promisify(execFile);

async function probes(workDir: string): Promise<Record<string, ProbeSample[] | Error>> {
  const results: Record<string, ProbeSample[] | Error> = {};
  const probe = async (name: string, dataDir: string) => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'support', 'moduleProbe.ts'), name, dataDir], {
      cwd: ROOT,
      maxBuffer: 1 << 20,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as ProbeSample;
  };
  for (let rep = 1; rep <= REPS; rep++) {
    // One data directory per repetition: the "existing" probe opens what the "fresh" one made.
    const dataDir = await mkdtemp(path.join(workDir, 'probe-pglite-'));
    try {
      for (const name of Object.keys(PROBES)) {
        if (results[name] instanceof Error) continue;
        try {
          const result = await probe(name, dataDir);
          results[name] = [...((results[name] as ProbeSample[] | undefined) ?? []), result];
          console.log(`  rep ${rep}/${REPS} ${name}: ${(result.ms / 1000).toFixed(2)} s, +${Math.round((result.rssAfter - result.rssBefore) / 1024 / 1024)} MiB`);
        } catch (err) {
          results[name] = err as Error;
          console.log(`  rep ${rep}/${REPS} ${name}: failed (${(err as Error).message.split('\n')[0]})`);
        }
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return results;
}

async function main() {
  const scripts = await readStartScripts(ROOT);
  const { start } = scripts;
  console.log(`Start-up and memory benchmark: ${REPS} repetitions, RSS read ${IDLE_S} s after /healthz first answers 200`);
  console.log(`project server: node ${start.nodeArgs.join(' ')}   (package.json "start": ${start.script})`);
  console.log(`at start: ${machineLine()}\n`);
  await runPrestart(ROOT, scripts);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'bench-start-'));
  try {
    const starts = await startUps(start, workDir);
    console.log(`\n${formatStarts(starts, IDLE_S)}\n`);
    console.log("The heap's biggest owners, each loaded alone in a fresh node process (with the TypeScript loader):");
    const owners = await probes(workDir);
    console.log(`\n${formatProbes(owners)}\n`);
    const detection = await detectionReport();
    console.log(`${detection.text}\n`);
    console.log(`at end: ${machineLine()}`);
    console.log('\nGoals (issue 13):');
    console.log(formatGoals([...startGoals(starts), ...detection.goals]));
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
