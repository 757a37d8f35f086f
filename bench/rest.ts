// npm run bench:rest [-- --db pglite|postgres|both] [--reps 3] [--seconds 10] [--warmup 3]
//                       [--connections 16] [--threads 2] [--streams 1000] [--pause 40] [--rows account,message-post] [--quick]
//
// The REST path under load (issue 13): wrk against the project's server, spawned as `npm start` runs it,
// and in the same run, back to back for every repetition of every row, against a bare Express 5
// hello-world and a bare node:http hello-world (same request, same connections). With both databases,
// both servers run from the start and take turns within each repetition. Prints medians and
// spreads (min-max) of requests/s, p50 and p99 latency, the ratio to bare Express, each server's
// event-loop delay under the load (measured inside the process by bench/support/loopDelayPreload.mjs),
// the machine's load at start and end, and each goal of issue 13 met or NOT met.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { freePort } from '../test/support/freePort.js';
import { BACKEND_NAMES, createBenchDatabase, type Backend } from './support/databases.js';
import { formatGoals } from './support/goals.js';
import { ask } from './support/ipc.js';
import { postgresCpu, postgresCpuSinceMs, processCpuMs } from './support/cpuTime.js';
import { machineLine } from './support/machine.js';
import { formatRestTables, restGoals, summarizeRow, type BackendRows, type Measurement, type Repetition, type RowId } from './support/restReport.js';
import { backends, positiveInteger } from './support/options.js';
import { MESSAGE_BODY, newAdminToken, seed, type Seed } from './support/seed.js';
import { BENCH_DIR, ROOT, serverEnv, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { readStartScripts, runPrestart } from './support/startCommand.js';
import { runWrk, wrkAvailable, wrkScript, WRK_MISSING, type WrkRequest } from './support/wrk.js';

const { values: flags } = parseArgs({
  options: {
    db: { type: 'string' },
    reps: { type: 'string' },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '16' },
    threads: { type: 'string', default: '2' },
    streams: { type: 'string', default: '1000' },
    pause: { type: 'string', default: '40' },
    rows: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
const REPS = positiveInteger('reps', flags.reps, flags.quick ? 1 : 3);
const SECONDS = positiveInteger('seconds', flags.seconds, flags.quick ? 3 : 10);
const WARMUP = positiveInteger('warmup', flags.warmup, flags.quick ? 1 : 3);
const CONNECTIONS = positiveInteger('connections', flags.connections, 16);
const THREADS = positiveInteger('threads', flags.threads, 2);
const STREAMS = positiveInteger('streams', flags.streams, 1000);
const PAUSE_MS = positiveInteger('pause', flags.pause, 40);
const BACKENDS = backends(flags.db);

interface Row {
  id: RowId;
  label: string;
  request(seed: Seed): WrkRequest;
  /** Open this many organization event streams while the project is measured. */
  streams?: number;
}

const auth = (seed: Seed) => ({ Authorization: `Bearer ${seed.key}` });
const json = (seed: Seed) => ({ ...auth(seed), 'Content-Type': 'application/json' });
const TRANSLATE_BODY = JSON.stringify({ target: 'fi', text: ['Where is my order?'] });
const postMessage = (seed: Seed): WrkRequest => ({
  method: 'POST',
  path: `/v1/sessions/${seed.postSessionId}/messages`,
  headers: json(seed),
  body: JSON.stringify(MESSAGE_BODY),
});

const postPausing = (seed: Seed): WrkRequest => ({ ...postMessage(seed), pauseMs: PAUSE_MS });

const ROWS: Row[] = [
  { id: 'healthz', label: 'GET /healthz', request: () => ({ method: 'GET', path: '/healthz', headers: {} }) },
  { id: 'account', label: 'GET /v1/account', request: (s) => ({ method: 'GET', path: '/v1/account', headers: auth(s) }) },
  { id: 'call', label: 'GET /v1/calls/{id}', request: (s) => ({ method: 'GET', path: `/v1/calls/${s.callId}`, headers: auth(s) }) },
  { id: 'translate', label: 'POST /v1/translate (test key)', request: (s) => ({ method: 'POST', path: '/v1/translate', headers: json(s), body: TRANSLATE_BODY }) },
  {
    id: 'translate-idempotent',
    label: 'POST /v1/translate + Idempotency-Key',
    request: (s) => ({
      method: 'POST',
      path: '/v1/translate',
      headers: json(s),
      body: TRANSLATE_BODY,
      idempotencyKeyPrefix: `bench-${randomBytes(6).toString('hex')}-`,
    }),
  },
  { id: 'message-post', label: 'POST /v1/sessions/{id}/messages', request: postMessage },
  {
    // The same posts spread over 16 sessions: what a post costs when it does not wait for another
    // post's lock on the same session (posts to one session are serialised by design: see docs/chats.md).
    id: 'message-post-spread',
    label: 'same, spread over 16 sessions',
    request: (seed) => ({ ...postMessage(seed), spreadPaths: seed.spreadSessionIds.map((id) => `/v1/sessions/${id}/messages`) }),
  },
  { id: 'message-post-streams', label: `POST .../messages, ${STREAMS.toLocaleString('en-US')} streams open`, request: postMessage, streams: STREAMS },
  // A steady load below what the machine can take: each client pauses after each answer. Here a post's
  // time shows whether its answer waits for the fan-out; at full load (the rows above) the fan-out's
  // own work, on the same cores, takes the place of posts.
  { id: 'message-post-steady', label: `same, each client pausing ${PAUSE_MS} ms`, request: postPausing },
  { id: 'message-post-steady-streams', label: `same, pausing, ${STREAMS.toLocaleString('en-US')} streams open`, request: postPausing, streams: STREAMS },
  {
    id: 'message-list',
    label: 'GET /v1/sessions/{id}/messages (20)',
    request: (s) => ({ method: 'GET', path: `/v1/sessions/${s.listSessionId}/messages?limit=20`, headers: auth(s) }),
  },
];
const chosen = flags.rows?.split(',').map((r) => r.trim());
const unknown = chosen?.filter((id) => !ROWS.some((row) => row.id === id));
if (unknown?.length) throw new Error(`unknown --rows ${unknown.join(', ')}; rows: ${ROWS.map((r) => r.id).join(', ')}`);
const rows = chosen ? ROWS.filter((row) => chosen.includes(row.id)) : ROWS;

interface Bare {
  express: ServerProcess;
  http: ServerProcess;
}

async function main() {
  if (!(await wrkAvailable())) {
    console.error(WRK_MISSING);
    process.exit(1);
  }
  const scripts = await readStartScripts(ROOT);
  const { start } = scripts;
  console.log(`REST benchmark: wrk ${THREADS} threads, ${CONNECTIONS} connections; ${WARMUP} s warm-up per row, then ${REPS} × ${SECONDS} s per row and server`);
  console.log(`project server: node ${start.nodeArgs.join(' ')}   (package.json "start": ${start.script})`);
  console.log(`at start: ${machineLine()}`);
  await runPrestart(ROOT, scripts);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'bench-rest-'));
  const bareSpec = (name: string, file: string) => ({
    name,
    nodeArgs: [path.join(BENCH_DIR, 'support', file)],
    env: serverEnv({}),
    readyPath: '/',
    logFile: path.join(workDir, `${file}.log`),
    measureLoop: true,
  });
  const bare: Bare = {
    express: await startServerProcess(bareSpec('bare Express', 'bareExpress.mjs')),
    http: await startServerProcess(bareSpec('bare node:http', 'bareHttp.mjs')),
  };
  const results: Partial<Record<Backend, BackendRows>> = {};
  const projects: ProjectUnderTest[] = [];
  try {
    for (const backend of BACKENDS) projects.push(await startProject(backend, start.nodeArgs, start.env, workDir));
    process.stdout.write(`warm-up (${WARMUP} s per row and server)...`);
    for (const project of projects) for (const row of rows) for (const target of [bare.express, bare.http, project.server]) await project.measure(target, row, WARMUP);
    console.log(' done');
    // Repetitions outermost, the databases taking turns within each: a row's repetitions are measured
    // minutes apart, each beside its baselines of the same minute, so a slow spell of a shared machine
    // reaches a few repetitions of every configuration rather than all of one.
    for (let rep = 1; rep <= REPS; rep++) {
      for (const project of projects) {
        for (const row of rows) {
          process.stdout.write(`rep ${rep}/${REPS} ${project.name} ${row.label}: `);
          const express = await project.measure(bare.express, row, SECONDS);
          const http = await project.measure(bare.http, row, SECONDS);
          const measured = await project.measureWithStreams(row);
          project.reps.get(row.id)!.push({ project: measured, express, http });
          console.log(`${Math.round(measured.wrk.rps)} req/s (bare Express ${Math.round(express.wrk.rps)}), p99 ${measured.wrk.p99Ms.toFixed(1)} ms`);
        }
      }
    }
    for (const project of projects) {
      results[project.backend] = Object.fromEntries(rows.map((row) => [row.id, summarizeRow(row.label, project.reps.get(row.id)!)]));
      console.log(`\n${formatRestTables(project.name, results[project.backend]!)}`);
    }
  } finally {
    for (const project of projects) await project.stop();
    await bare.express.stop();
    await bare.http.stop();
    await rm(workDir, { recursive: true, force: true });
  }
  console.log(`\nat end: ${machineLine()}`);
  console.log(
    '\nratio = project req/s / bare Express req/s in the same repetition (median and min-max of the repetitions).\n' +
      'p50/p99: latency of every request of a run, from wrk. loop: the server process\'s event-loop delay during the\n' +
      'run (monitorEventLoopDelay, 5 ms resolution). failed: socket errors and answers >= 400 (should be 0).',
  );
  console.log('\nGoals (issue 13):');
  console.log(formatGoals(restGoals(results, BACKEND_NAMES)));
}

/** The project's server on one database, seeded, with what measures it. */
interface ProjectUnderTest {
  backend: Backend;
  name: string;
  server: ServerProcess;
  reps: Map<RowId, Repetition[]>;
  /** One run of a row's load against `target` (this project's server or a baseline). */
  measure(target: ServerProcess, row: Row, seconds: number): Promise<Measurement>;
  /** One run of a row against this project's server, with the row's event streams held open meanwhile. */
  measureWithStreams(row: Row): Promise<Measurement>;
  stop(): Promise<void>;
}

async function startProject(backend: Backend, nodeArgs: string[], startEnv: Record<string, string>, workDir: string): Promise<ProjectUnderTest> {
  const name = BACKEND_NAMES[backend];
  console.log(`\n== ${name}: starting the server`);
  const db = await createBenchDatabase(backend, workDir);
  const adminToken = newAdminToken();
  let server: ServerProcess | undefined;
  let streams: ChildProcess | undefined;
  const stop = async () => {
    streams?.kill();
    await server?.stop();
    await db.drop();
  };
  try {
    server = await startServerProcess({
      name: `project (${name})`,
      nodeArgs,
      env: serverEnv({
        ...startEnv,
        ...db.env,
        HOST: '127.0.0.1',
        ADMIN_TOKEN: adminToken,
        AUDIOSOCKET_PORT: String(await freePort()),
        // The load comes from one key: the limit must not refuse it (the limiter still runs on every request).
        RATE_LIMIT_PER_MINUTE: '1000000',
        EVENT_STREAMS_PER_KEY: String(STREAMS + 50),
      }),
      readyPath: '/healthz',
      logFile: path.join(workDir, `server-${backend}.log`),
      measureLoop: true,
    });
    const project = server;
    const data = await seed(project.url, adminToken);
    const scripts = new Map<RowId, string>();
    for (const row of rows) {
      const file = path.join(workDir, `${backend}-${row.id}.lua`);
      await writeFile(file, wrkScript(row.request(data)));
      scripts.set(row.id, file);
    }
    const measure = async (target: ServerProcess, row: Row, seconds: number): Promise<Measurement> => {
      await target.loopReset();
      const before = target === project ? { server: await processCpuMs(project.pid), postgres: backend === 'postgres' ? await postgresCpu() : null } : null;
      const wrk = await runWrk({ baseUrl: target.url, scriptFile: scripts.get(row.id)!, connections: CONNECTIONS, threads: THREADS, seconds });
      const loop = await target.loopRead();
      if (!before) return { wrk, loop };
      const perRequestUs = (ms: number) => (ms * 1000) / wrk.requests;
      const server = perRequestUs((await processCpuMs(project.pid)) - before.server);
      const postgres = before.postgres === null ? null : perRequestUs(await postgresCpuSinceMs(before.postgres));
      return { wrk, loop, cpu: { server, postgres } };
    };
    const measureWithStreams = async (row: Row): Promise<Measurement> => {
      if (!row.streams) return measure(project, row, SECONDS);
      streams ??= openStreamHolder();
      // A loaded machine may take minutes to authenticate a thousand streams.
      await ask(streams, { cmd: 'open', url: `${project.url}/v1/events`, key: data.key, count: row.streams }, 'opened', 600_000);
      const measured = await measure(project, row, SECONDS);
      const { min, max } = await settledEventCounts(streams);
      await ask(streams, { cmd: 'close' }, 'closed');
      process.stdout.write(`[each of ${row.streams} streams received ${min === max ? min : `${min}-${max}`} events] `);
      return measured;
    };
    return { backend, name, server: project, reps: new Map(rows.map((row) => [row.id, []])), measure, measureWithStreams, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function openStreamHolder(): ChildProcess {
  return fork(path.join(BENCH_DIR, 'support', 'eventStreams.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

/** Events received per stream once deliveries stopped (the total no longer grows over half a second). */
async function settledEventCounts(proc: ChildProcess): Promise<{ min: number; max: number }> {
  let last = -1;
  for (;;) {
    const counts = (await ask(proc, { cmd: 'count' }, 'count')) as { min: number; max: number; total: number };
    if (counts.total === last) return counts;
    last = counts.total;
    await sleep(500);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
