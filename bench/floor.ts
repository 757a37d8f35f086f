// npm run bench:floor [-- --reps 3 --seconds 5 --warmup 1 --connections 16 --threads 2]
//
// How far a read that needs one database round trip can get on this machine at best (issue 13): wrk
// against bare Express and against bare Express answering `GET /v1/account` from one prepared PostgreSQL
// statement (bench/support/bareExpressPostgres.mjs), back to back in every repetition. Its ratio to bare
// Express is the ceiling of the `GET /v1/account` row of bench:rest on PostgreSQL: what the server does
// besides that one statement (authentication, rate limit, validation, the request log, the event hold)
// has to fit in what is left between that ceiling and the goal.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { postgresCpu, postgresCpuSinceMs, processCpuMs } from './support/cpuTime.js';
import { createBenchDatabase } from './support/databases.js';
import { table, withSpread } from './support/format.js';
import { machineLine } from './support/machine.js';
import { positiveInteger } from './support/options.js';
import { BENCH_DIR, serverEnv, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { spread } from './support/stats.js';
import { runWrk, wrkAvailable, wrkScript, WRK_MISSING } from './support/wrk.js';

const { values: flags } = parseArgs({
  options: {
    reps: { type: 'string' },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    threads: { type: 'string' },
  },
});
const REPS = positiveInteger('reps', flags.reps, 3);
const SECONDS = positiveInteger('seconds', flags.seconds, 5);
const WARMUP = positiveInteger('warmup', flags.warmup, 1);
const CONNECTIONS = positiveInteger('connections', flags.connections, 16);
const THREADS = positiveInteger('threads', flags.threads, 2);

interface Run {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  serverUs: number;
  postgresUs: number;
}

async function main() {
  if (!(await wrkAvailable())) {
    console.error(WRK_MISSING);
    process.exit(1);
  }
  console.log(`read floor: wrk ${THREADS} threads, ${CONNECTIONS} connections, GET /v1/account; ${REPS} × ${SECONDS} s per server`);
  console.log(`at start: ${machineLine()}`);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'bench-floor-'));
  const db = await createBenchDatabase('postgres', workDir);
  const servers: ServerProcess[] = [];
  try {
    const start = async (name: string, file: string, env: Record<string, string>) => {
      const server = await startServerProcess({
        name,
        nodeArgs: [path.join(BENCH_DIR, 'support', file)],
        env: serverEnv(env),
        readyPath: '/',
        logFile: path.join(workDir, `${file}.log`),
        measureLoop: false,
      });
      servers.push(server);
      return server;
    };
    const bare = await start('bare Express', 'bareExpress.mjs', {});
    const floor = await start('bare Express + one PostgreSQL statement', 'bareExpressPostgres.mjs', { DATABASE_URL: db.env.DATABASE_URL! });
    const scriptFile = path.join(workDir, 'account.lua');
    await writeFile(scriptFile, wrkScript({ method: 'GET', path: '/v1/account', headers: {} }));
    const measure = async (server: ServerProcess, seconds: number): Promise<Run> => {
      const before = { server: await processCpuMs(server.pid), postgres: await postgresCpu() };
      const wrk = await runWrk({ baseUrl: server.url, scriptFile, connections: CONNECTIONS, threads: THREADS, seconds });
      const perRequestUs = (ms: number) => (ms * 1000) / wrk.requests;
      return {
        rps: wrk.rps,
        p50Ms: wrk.p50Ms,
        p99Ms: wrk.p99Ms,
        serverUs: perRequestUs((await processCpuMs(server.pid)) - before.server),
        postgresUs: perRequestUs(await postgresCpuSinceMs(before.postgres)),
      };
    };
    for (const server of [bare, floor]) await measure(server, WARMUP);
    const runs = new Map<ServerProcess, Run[]>([[bare, []], [floor, []]]);
    const ratios: number[] = [];
    for (let rep = 1; rep <= REPS; rep++) {
      const bareRun = await measure(bare, SECONDS);
      const floorRun = await measure(floor, SECONDS);
      runs.get(bare)!.push(bareRun);
      runs.get(floor)!.push(floorRun);
      ratios.push(floorRun.rps / bareRun.rps);
      console.log(`rep ${rep}/${REPS}: bare Express ${Math.round(bareRun.rps)} req/s, with one statement ${Math.round(floorRun.rps)} req/s`);
    }
    const of = (server: ServerProcess, pick: (run: Run) => number) => spread(runs.get(server)!.map(pick));
    console.log(
      `\n${table([
        ['GET /v1/account', 'req/s', 'p50 ms', 'p99 ms', 'CPU us/req: server', 'PostgreSQL'],
        ...[bare, floor].map((server) => [
          server.name,
          withSpread(of(server, (r) => r.rps)),
          withSpread(of(server, (r) => r.p50Ms), 1),
          withSpread(of(server, (r) => r.p99Ms), 1),
          withSpread(of(server, (r) => r.serverUs)),
          withSpread(of(server, (r) => r.postgresUs)),
        ]),
      ])}`,
    );
    console.log(`\nceiling of the GET /v1/account ratio on PostgreSQL: ${withSpread(spread(ratios), 2)} (issue 13's goal: 0.5)`);
  } finally {
    for (const server of servers) await server.stop();
    await db.drop();
    await rm(workDir, { recursive: true, force: true });
  }
  console.log(`\nat end: ${machineLine()}`);
}

await main();
