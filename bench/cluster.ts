// npm run bench:cluster [-- --reps 3 --seconds 5 --connections 16 --echoes 200]
//
// What a second instance adds, in one run on one machine: authenticated requests (GET /v1/account)
// straight to one instance, through nginx to one instance, and through nginx to two (round robin);
// and the time a test-mode call's audio takes to come back (a 20 ms frame sent on the stream socket,
// heard on the listen socket), straight, through nginx, and with the listen socket on the other
// instance, bridged to the room through Redis. Two instances share one PostgreSQL database
// and one Redis, as deploy/nginx.conf and docker-compose.yml run them.
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
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { requireNginx, startNginx } from '../test/support/nginx.js';
import { createBenchDatabase } from './support/databases.js';
import { num, table, withSpread } from './support/format.js';
import { machineLine } from './support/machine.js';
import { positiveInteger } from './support/options.js';
import { newAdminToken, seed } from './support/seed.js';
import { ROOT, serverEnv, startServerProcess, type ServerProcess } from './support/serverProcess.js';
import { readStartScripts, runPrestart } from './support/startCommand.js';
import { median, spread } from './support/stats.js';
import { runWrk, WRK_MISSING, wrkAvailable, wrkScript } from './support/wrk.js';

const { values: flags } = parseArgs({
  options: {
    reps: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    echoes: { type: 'string', default: '200' },
  },
});
const REPS = positiveInteger('reps', flags.reps, 3);
const SECONDS = positiveInteger('seconds', flags.seconds, 5);
const CONNECTIONS = positiveInteger('connections', flags.connections, 16);
const ECHOES = positiveInteger('echoes', flags.echoes, 200);
const REDIS_URL = process.env.REDIS_URL || process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const SECRETS_KEY = randomBytes(32).toString('base64');

/**
 * Milliseconds from sending a 20 ms frame on a test-mode call's stream socket (opened at `baseUrl`) to
 * hearing it on the side's listen socket (opened at `earUrl`), per frame.
 */
async function echoTimes(baseUrl: string, earUrl: string, key: string): Promise<number[]> {
  const api = (p: string, init: RequestInit = {}) => fetch(baseUrl + p, init).then((r) => r.json() as Promise<Record<string, any>>);
  const call = await api('/v1/calls', {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ agent_language: 'en', customer_language: 'fi' }),
  });
  const callKey = String(call.agent_url).split('#k=')[1];
  const join = await api(`/calls/public/${call.id}`, { headers: { 'X-Call-Key': callKey } });
  const ws = baseUrl.replace(/^http/, 'ws');
  const earWs = earUrl.replace(/^http/, 'ws');
  const open = (url: string) =>
    new Promise<WebSocket>((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('open', () => resolve(socket));
      socket.once('error', reject);
    });
  // The stream socket first: the room is made where it lands.
  const mic = await open(`${ws}${join.stream.path}?token=${encodeURIComponent(join.stream.token)}&source_id=bench`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const ear = await open(`${earWs}${join.listen.path}?unlock=${encodeURIComponent(join.listen.unlock)}`);
  await new Promise((resolve) => setTimeout(resolve, 200));
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
  await api(`/v1/calls/${call.id}/end`, { method: 'POST', headers: { Authorization: `Bearer ${key}` } });
  return times;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

async function main() {
  if (!(await wrkAvailable())) throw new Error(WRK_MISSING);
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
        RATE_LIMIT_PER_MINUTE: '1000000',
        AUDIOSOCKET_PORT: '0',
        LOG_LEVEL: 'warn',
        DATA_DIR: path.join(workDir, `data-${n}`),
      });
    for (const n of [1, 2]) {
      instances.push(
        await startServerProcess({
          name: `instance ${n}`,
          nodeArgs: scripts.start.nodeArgs,
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
    balancers.push(one, two);

    const script = path.join(workDir, 'account.lua');
    await writeFile(script, wrkScript({ method: 'GET', path: '/v1/account', headers: { Authorization: `Bearer ${seeded.key}` } }));
    const targets = [
      { label: 'one instance, direct', url: instances[0]!.url },
      { label: 'one instance, through nginx', url: one.url },
      { label: 'two instances, through nginx', url: two.url },
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
      { label: 'both through nginx (two instances)', mic: two.url, ear: two.url },
      { label: 'listen socket bridged from the other instance', mic: instances[0]!.url, ear: instances[1]!.url },
    ];
    const echoRows: string[][] = [];
    for (const route of echoes) {
      const times = await echoTimes(route.mic, route.ear, seeded.key);
      echoRows.push([route.label, num(percentile(times, 50), 2), num(percentile(times, 99), 2)]);
    }
    console.log(`\nA test-mode call's 20 ms frame, stream socket to listen socket, ${ECHOES} frames one after another\n`);
    console.log(table([['path', 'p50 ms', 'p99 ms'], ...echoRows]));
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

