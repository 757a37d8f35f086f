// npm run bench:cluster [-- --reps 3 --seconds 5 --connections 16 --echoes 200 --calls 50 --call-seconds 10 --clients 2]
//                        [--only calls] [--cpu-prof DIR]
//
// --only calls: the relayed calls under load alone (no requests, no echoes). --cpu-prof DIR: each
// instance writes a V8 CPU profile into DIR when it stops (node --cpu-prof), to see where a frame goes.
//
// What a second instance adds, in one run on one machine: authenticated requests (GET /v1/account)
// straight to one instance, through nginx to one instance, and through nginx to two (round robin);
// the time a test-mode call's audio takes to come back (a 20 ms frame sent on the stream socket,
// heard on the listen socket), straight, through nginx, and with the listen socket on the other
// instance, bridged to the room through Redis; and what relaying costs under load: --calls test-mode
// calls streaming 20 ms frames in real time on both sides, through nginx, with every socket on the
// room's instance (local) or with the agent's listen socket and the customer's stream socket on the
// other instance (relayed: each frame crosses Redis once), one phase of each per repetition, in
// alternating order; both instances' CPU per call and every frame's latency (bench/support/relayedCalls.ts).
// Two instances share one PostgreSQL database and one Redis, as deploy/nginx.conf and docker-compose.yml
// run them.
//
// Needs wrk (WRK_PATH), nginx (NGINX_PATH, default /usr/sbin/nginx), PostgreSQL (a role that may create
// databases: DATABASE_URL, else TEST_DATABASE_URL, else the tests' default) and Redis (REDIS_URL, else
// TEST_REDIS_URL, else redis://127.0.0.1:6379). On a 2-core machine the two instances, nginx, wrk,
// PostgreSQL and Redis share the same cores: a second instance cannot add capacity here, so what the
// run shows is what the balancer and the shared stores cost.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { requireNginx, startNginx } from '../test/support/nginx.js';
import type { Target } from './mediaLoad.js';
import { processCpuMs } from './support/cpuTime.js';
import { createBenchDatabase } from './support/databases.js';
import { num, table, withSpread } from './support/format.js';
import { formatGoals } from './support/goals.js';
import { LoadClients } from './support/loadClients.js';
import { machineLine } from './support/machine.js';
import { positiveInteger } from './support/options.js';
import { callGoals, compareCalls, cpuPerCall, formatCallPhases, type CallLayout, type CallPhase } from './support/relayedCalls.js';
import { newAdminToken, seed } from './support/seed.js';
import { ROOT, serverEnv, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { readStartScripts, runPrestart } from './support/startCommand.js';
import { distribution, median, spread } from './support/stats.js';
import { createTestCalls, endTestCalls, listenUrl, sideTarget, streamUrl, type TestCall } from './support/testCalls.js';
import { runWrk, WRK_MISSING, wrkAvailable, wrkScript } from './support/wrk.js';

const { values: flags } = parseArgs({
  options: {
    reps: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    echoes: { type: 'string', default: '200' },
    calls: { type: 'string', default: '50' },
    'call-seconds': { type: 'string', default: '10' },
    clients: { type: 'string', default: '2' },
    only: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
if (flags.only !== undefined && flags.only !== 'calls') throw new Error('--only takes one value: calls');
const ONLY_CALLS = flags.only === 'calls';
const CPU_PROF_DIR = flags['cpu-prof'] === undefined ? undefined : path.resolve(flags['cpu-prof']);
const REPS = positiveInteger('reps', flags.reps, 3);
const SECONDS = positiveInteger('seconds', flags.seconds, 5);
const CONNECTIONS = positiveInteger('connections', flags.connections, 16);
const ECHOES = positiveInteger('echoes', flags.echoes, 200);
const CALLS = positiveInteger('calls', flags.calls, 50);
const CALL_SECONDS = positiveInteger('call-seconds', flags['call-seconds'], 10);
const CLIENTS = positiveInteger('clients', flags.clients, 2);
const CALL_WARMUP_MS = 3_000;
const REDIS_URL = process.env.REDIS_URL || process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const SECRETS_KEY = randomBytes(32).toString('base64');

/**
 * Milliseconds from sending a 20 ms frame on a test-mode call's stream socket (opened at `baseUrl`) to
 * hearing it on the side's listen socket (opened at `earUrl`), per frame.
 */
async function echoTimes(baseUrl: string, earUrl: string, key: string): Promise<number[]> {
  const [call] = await createTestCalls(baseUrl, key, 1);
  const open = (url: string) =>
    new Promise<WebSocket>((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('open', () => resolve(socket));
      socket.once('error', reject);
    });
  // The stream socket first: the room is made where it lands.
  const mic = await open(streamUrl(baseUrl, call!.agent));
  await sleep(200);
  const ear = await open(listenUrl(earUrl, call!.agent));
  await sleep(200);
  const times: number[] = [];
  const frame = Buffer.alloc(960, 7);
  // Audio comes as binary messages; captions and notices (text) may come between them.
  let heard: (() => void) | null = null;
  ear.on('message', (_data, isBinary) => {
    if (isBinary) heard?.();
  });
  for (let i = 0; i < ECHOES; i++) {
    const echoed = new Promise<void>((resolve) => (heard = resolve));
    const sent = performance.now();
    mic.send(frame);
    await echoed;
    times.push(performance.now() - sent);
  }
  mic.close();
  ear.close();
  await endTestCalls(baseUrl, key, [call!]);
  return times;
}

/** Requests straight, through nginx to one and to two instances; then one frame at a time along each socket path. */
async function requestsAndEchoes(instances: ServerProcess[], oneUrl: string, twoUrl: string, key: string, workDir: string): Promise<void> {
  const script = path.join(workDir, 'account.lua');
  await writeFile(script, wrkScript({ method: 'GET', path: '/v1/account', headers: { Authorization: `Bearer ${key}` } }));
  const targets = [
    { label: 'one instance, direct', url: instances[0]!.url },
    { label: 'one instance, through nginx', url: oneUrl },
    { label: 'two instances, through nginx', url: twoUrl },
  ];
  const rps = new Map<string, number[]>(targets.map((t) => [t.label, []]));
  const p99 = new Map<string, number[]>(targets.map((t) => [t.label, []]));
  for (const target of targets) await runWrk({ baseUrl: target.url, scriptFile: script, connections: CONNECTIONS, threads: 2, seconds: 2 });
  for (let rep = 1; rep <= REPS; rep++) {
    for (const target of targets) {
      const result = await runWrk({ baseUrl: target.url, scriptFile: script, connections: CONNECTIONS, threads: 2, seconds: SECONDS });
      rps.get(target.label)!.push(result.rps);
      p99.get(target.label)!.push(result.p99Ms);
      console.log(`rep ${rep}/${REPS} ${target.label}: ${Math.round(result.rps)} req/s, p99 ${result.p99Ms.toFixed(1)} ms`);
    }
  }
  const base = median(rps.get(targets[0]!.label)!);
  console.log(`\nGET /v1/account, ${CONNECTIONS} connections, medians of ${REPS} (spread)\n`);
  console.log(
    table([
      ['target', 'req/s', 'vs direct', 'p99 ms'],
      ...targets.map((t) => [t.label, withSpread(spread(rps.get(t.label)!)), num(median(rps.get(t.label)!) / base, 2), num(median(p99.get(t.label)!), 1)]),
    ]),
  );

  const echoes = [
    { label: 'both sockets straight to the room\'s instance', mic: instances[0]!.url, ear: instances[0]!.url },
    { label: 'both through nginx (two instances)', mic: twoUrl, ear: twoUrl },
    { label: 'listen socket bridged from the other instance', mic: instances[0]!.url, ear: instances[1]!.url },
  ];
  const echoRows: string[][] = [];
  for (const route of echoes) {
    const times = distribution(await echoTimes(route.mic, route.ear, key))!;
    echoRows.push([route.label, num(times.p50, 2), num(times.p99, 2)]);
  }
  console.log(`\nA test-mode call's 20 ms frame, stream socket to listen socket, ${ECHOES} frames one after another\n`);
  console.log(table([['path', 'p50 ms', 'p99 ms'], ...echoRows]));
}

interface CallLoadSetup {
  key: string;
  /** Where calls are made (the API). */
  apiUrl: string;
  /** nginx in front of the room's instance alone, and of the other alone. */
  near: string;
  far: string;
  /** The room's instance first. */
  instances: ServerProcess[];
  redis: Redis;
  redisPrefix: string;
}

/**
 * The sockets of a call's two sides: all through `near` (local), or the agent's listen socket and the
 * customer's stream socket through `far` (relayed), opened once the rooms the others make are settled.
 */
function callTargets(call: TestCall, layout: CallLayout, near: string, far: string): Target[] {
  if (layout === 'local') return [sideTarget(near, call.agent), sideTarget(near, call.customer)];
  return [
    { stream: streamUrl(near, call.agent), listen: listenUrl(far, call.agent), later: 'listen' },
    { stream: streamUrl(far, call.customer), listen: listenUrl(near, call.customer), later: 'stream' },
  ];
}

/** Waits until every call's room is held (its lease in Redis), and answers the instance ids holding them. */
async function roomHolders(setup: CallLoadSetup, calls: readonly TestCall[]): Promise<Set<string>> {
  const keys = calls.map((call) => `${setup.redisPrefix}room:${call.id}`);
  const deadline = performance.now() + 60_000;
  for (;;) {
    const holders = await setup.redis.mget(keys);
    if (holders.every((holder) => holder !== null)) return new Set(holders as string[]);
    if (performance.now() > deadline) throw new Error(`${holders.filter((h) => h === null).length} of ${calls.length} rooms not made within 60 s`);
    await sleep(50);
  }
}

/** One phase: CALLS new calls in `layout`, streaming; both instances' CPU over the measured window. */
async function callPhase(setup: CallLoadSetup, layout: CallLayout, rep: number): Promise<CallPhase> {
  const calls = await createTestCalls(setup.apiUrl, setup.key, CALLS);
  const clients = LoadClients.fork(
    calls.flatMap((call) => callTargets(call, layout, setup.near, setup.far)),
    [],
    CLIENTS,
  );
  try {
    await clients.connect(true);
    // Every room is made by a socket on the room's instance before any socket reaches the other.
    const holders = await roomHolders(setup, calls);
    await clients.connectLater();
    const after = await roomHolders(setup, calls);
    if (holders.size !== 1 || after.size !== 1 || [...after][0] !== [...holders][0]) throw new Error(`the ${layout} calls' rooms are not all on one instance`);
    const streaming = clients.stream({ warmupMs: CALL_WARMUP_MS, measureMs: CALL_SECONDS * 1_000, drainMs: 1_000 });
    await streaming.measuring;
    const cpuBefore = await Promise.all(setup.instances.map((instance) => processCpuMs(instance.pid)));
    const started = performance.now();
    await streaming.ended;
    const wallMs = performance.now() - started;
    const cpuMs = (await Promise.all(setup.instances.map((instance) => processCpuMs(instance.pid)))).map((cpu, i) => cpu - cpuBefore[i]!);
    const result = await streaming.results;
    await clients.disconnect();
    return { layout, rep, calls: CALLS, wallMs, roomCpuMs: cpuMs[0]!, otherCpuMs: cpuMs[1]!, sent: result.sent, lost: result.lost, latency: distribution(result.latencies) };
  } catch (err) {
    clients.kill();
    throw err;
  } finally {
    await endTestCalls(setup.apiUrl, setup.key, calls);
  }
}

async function main() {
  if (!ONLY_CALLS && !(await wrkAvailable())) throw new Error(WRK_MISSING);
  await requireNginx();
  const scripts = await readStartScripts(ROOT);
  console.log(`cluster benchmark: wrk ${CONNECTIONS} connections, ${REPS} × ${SECONDS} s per target; ${ECHOES} echoes per socket path`);
  console.log(`at start: ${machineLine()}`);
  await runPrestart(ROOT, scripts);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'bench-cluster-'));
  const db = await createBenchDatabase('postgres', workDir);
  const adminToken = newAdminToken();
  const instances: ServerProcess[] = [];
  const balancers: { url: string; stop(): Promise<void> }[] = [];
  try {
    // One deployment: both instances with the same Redis prefix.
    const redisPrefix = `bench-${randomBytes(4).toString('hex')}:`;
    const env = (n: number) =>
      serverEnv({
        ...scripts.start.env,
        ...db.env,
        HOST: '127.0.0.1',
        ADMIN_TOKEN: adminToken,
        SECRETS_KEY,
        REDIS_URL,
        REDIS_PREFIX: redisPrefix,
        // On a loaded machine an instance's busy event loop may hold a reply past the 2 s default: that is not Redis away.
        REDIS_COMMAND_TIMEOUT_MS: '60000',
        RATE_LIMIT_PER_MINUTE: '1000000',
        AUDIOSOCKET_PORT: '0',
        LOG_LEVEL: 'warn',
        DATA_DIR: path.join(workDir, `data-${n}`),
      });
    for (const n of [1, 2]) {
      instances.push(
        await startServerProcess({
          name: `instance ${n}`,
          nodeArgs: CPU_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF_DIR, `--cpu-prof-name=instance-${n}.cpuprofile`, ...scripts.start.nodeArgs] : scripts.start.nodeArgs,
          env: env(n),
          readyPath: '/readyz',
          logFile: path.join(workDir, `instance-${n}.log`),
          measureLoop: false,
        }),
      );
    }
    // Both instances share one database and Redis: the second's environment differs only in DATA_DIR.
    const seeded = await seed(instances[0]!.url, adminToken);
    const one = await startNginx([new URL(instances[0]!.url).host]);
    const two = await startNginx(instances.map((instance) => new URL(instance.url).host));
    const otherAlone = await startNginx([new URL(instances[1]!.url).host]);
    balancers.push(one, two, otherAlone);

    if (!ONLY_CALLS) await requestsAndEchoes(instances, one.url, two.url, seeded.key, workDir);

    console.log(
      `\n${CALLS} test-mode calls at once, both sides streaming 20 ms frames in real time through nginx (${CALL_WARMUP_MS / 1_000} s warm-up, ` +
        `${CALL_SECONDS} s measured), local and relayed in turn, ${REPS} of each; ${CLIENTS} load processes\n`,
    );
    const redis = new Redis(REDIS_URL);
    const phases: CallPhase[] = [];
    try {
      const setup: CallLoadSetup = { key: seeded.key, apiUrl: instances[0]!.url, near: one.url, far: otherAlone.url, instances, redis, redisPrefix };
      for (let rep = 1; rep <= REPS; rep++) {
        const order: CallLayout[] = rep % 2 ? ['local', 'relayed'] : ['relayed', 'local'];
        for (const layout of order) {
          const phase = await callPhase(setup, layout, rep);
          phases.push(phase);
          console.log(`rep ${rep}/${REPS} ${layout}: CPU ${num(cpuPerCall(phase), 3)} % of a core per call, p99 ${num(phase.latency?.p99 ?? Number.NaN, 2)} ms`);
        }
      }
    } finally {
      redis.disconnect();
    }
    console.log(`\n${formatCallPhases(phases)}\n`);
    console.log(formatGoals(callGoals(compareCalls(phases))));
    console.log(`\nat end: ${machineLine()}`);
  } finally {
    for (const balancer of balancers) await balancer.stop();
    for (const instance of instances) await instance.stop();
    await db.drop();
    const logs = await readFile(path.join(workDir, 'instance-1.log'), 'utf8').catch(() => '');
    if (/"level":(50|60)/.test(logs)) console.error(`instance 1 logged errors:\n${logs.split('\n').slice(-20).join('\n')}`);
    await rm(workDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

