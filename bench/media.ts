// npm run bench:media [-- --calls 200 --seconds 20 --warmup 3 --clients 2 --db pglite|postgres --only live --reps 1
//                         --gc --profile DIR]
//
// --db: the server's database, in-memory PGlite in its own process (default) or a fresh PostgreSQL database
// (whose processes' CPU is then counted apart). --only live: only the bare relay and the live calls (the
// phases issue 35's goals are judged on). --reps: the two live phases (with and without transcripts) take turns this
// many times; the figures judged are medians. --gc: what the server's garbage collector did in each phase's measured
// window (collections, pauses, bytes allocated and promoted), as more rows of the table. --profile DIR: a CPU profile
// and a heap profile of what survived the young generation, of each phase's measured window, written into DIR (the
// profilers slow the server: that run's timings are not comparable).
//
// N concurrent test-mode calls through the real server (media plane: stream socket -> room ->
// WAV chunks -> listen socket), both sides streaming 20 ms frames in real time, then the same
// load through a bare `ws` relay (each stream frame forwarded as is to its listener), then N phone calls
// (the agent on WebSockets as above, the customer on a scripted Twilio media stream), then N inbound phone
// calls (each caller put through by the number's Voice webhook, then the same), then N live calls
// through an interpreter stand-in that answers at once (each frame comes back as it went, to the other
// side, and a caption ends every 3 s of a side's speech: an utterance stored), with their transcripts
// and again without (`transcript: false`): the server's share of interpretation latency beside the
// relay's, and what storing transcripts costs. The server (and
// the relay) run in this process; the load runs in child processes (bench/mediaLoad.ts), so the CPU
// figures below are the server's alone. Prints a side-by-side table.
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { loadConfig } from '../src/config.js';
import { newSecret } from '../src/lib/ids.js';
import { startServer } from '../src/app/server.js';
import type { LoadResult, PhoneTarget, Target } from './mediaLoad.js';
import { LoadClients } from './support/loadClients.js';
import { distribution, median, type Distribution } from './support/stats.js';
import { oneOf } from './support/options.js';
import { createTestCalls, endTestCalls, listenUrl, sideTarget, streamUrl } from './support/testCalls.js';
import type { InterpreterFactory } from '../src/calls/media/interpreter.js';
import { callInbound } from './support/inboundCalls.js';
import { postgresCpu, postgresCpuSinceMs } from './support/cpuTime.js';
import { createBenchDatabase, type BenchDatabase } from './support/databases.js';
import { startProfiles, traceGc, type GcFigures } from './support/phaseTrace.js';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  const value = at >= 0 ? Number(args[at + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
};
const CALLS = flag('calls', 200);
const SECONDS = flag('seconds', 20);
const WARMUP = flag('warmup', 3);
const CLIENTS = flag('clients', 2);
const REPS = flag('reps', 1);
const ADMIN = newSecret('adm_bench_');
const raw = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const DB = oneOf('db', raw('db'), ['pglite', 'postgres'], 'pglite');
const ONLY_LIVE = oneOf('only', raw('only'), ['all', 'live'], 'all') === 'live';
const GC = args.includes('--gc');
const PROFILE_DIR = raw('profile') === undefined ? undefined : path.resolve(raw('profile')!);

/** A phase: what its load processes measured together, and what the server did meanwhile. */
interface PhaseResult
  extends Pick<LoadResult, 'sent' | 'received' | 'lost' | 'badFrames' | 'outOfOrder' | 'lateSends' | 'clientLoopDelayP99' | 'phoneFramesSent' | 'phoneFramesReceived' | 'phoneMarks'> {
  name: string;
  calls: number;
  sockets: number;
  latency: Distribution | null;
  serverCpu: number;
  /** PostgreSQL's processes (% of one core) while the phase measured; null on PGlite (in the server's process). */
  databaseCpu: number | null;
  clientCpu: number;
  rssBefore: number;
  rssStreaming: number;
  heapPerCall: number;
  externalPerCall: number;
  loopDelayP99: number;
  dropped: number | null;
  /** With --gc: the collector's work in the measured window. */
  gc: GcFigures | null;
  /** The measured window's length, ms. */
  wallMs: number;
}

function memory() {
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers };
}

/** Bytes a phase's scavenges promoted per second of its measured window (--gc). */
const promotedPerSecond = (r: PhaseResult) => r.gc!.promoted / (r.wallMs / 1_000);

/** Phases profiled so far (each profile's file is numbered). */
let profiled = 0;

async function runPhase(
  name: string,
  calls: number,
  targets: Target[],
  wav: boolean,
  droppedNow: () => number | null,
  phones: PhoneTarget[] = [],
): Promise<PhaseResult> {
  const sockets = targets.length * 2 + phones.length;
  process.stdout.write(`\n[${name}] connecting ${sockets} sockets from ${Math.min(CLIENTS, sockets)} load processes...`);
  gc();
  await new Promise((resolve) => setTimeout(resolve, 200));
  gc();
  const before = memory();
  const clients = LoadClients.fork(targets, phones, CLIENTS);
  await clients.connect(wav);
  process.stdout.write(` streaming ${WARMUP} s warm-up + ${SECONDS} s measured...`);
  const loop = monitorEventLoopDelay({ resolution: 5 });
  const streaming = clients.stream({ warmupMs: WARMUP * 1_000, measureMs: SECONDS * 1_000, drainMs: 1_000 });
  await streaming.measuring;
  const cpu0 = process.cpuUsage();
  const database0 = DB === 'postgres' ? await postgresCpu() : null;
  const stopProfiles = PROFILE_DIR ? await startProfiles(PROFILE_DIR, `${name} ${++profiled}`) : null;
  const stopGc = GC ? traceGc() : null;
  const t0 = performance.now();
  loop.enable();
  const samples: Array<ReturnType<typeof memory>> = [];
  const sampler = setInterval(() => samples.push(memory()), 1_000);
  const clientCores = await streaming.ended;
  const usage = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  const gcFigures = stopGc?.() ?? null;
  await stopProfiles?.();
  const databaseCpu = database0 ? ((await postgresCpuSinceMs(database0)) / wall) * 100 : null;
  loop.disable();
  clearInterval(sampler);
  // What the open calls hold once garbage is collected (sockets and rooms still open).
  gc();
  gc();
  const retained = memory();
  const result = await streaming.results;
  const dropped = droppedNow();
  await clients.disconnect().catch(() => {});
  const medianSample = (key: keyof ReturnType<typeof memory>) => {
    const values = samples.map((s) => s[key]).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? 0;
  };
  process.stdout.write(' done\n');
  return {
    name,
    calls,
    sockets,
    sent: result.sent,
    received: result.received,
    lost: result.lost,
    badFrames: result.badFrames,
    outOfOrder: result.outOfOrder,
    lateSends: result.lateSends,
    clientLoopDelayP99: result.clientLoopDelayP99,
    latency: distribution(result.latencies),
    serverCpu: ((usage.user + usage.system) / 1_000 / wall) * 100,
    databaseCpu,
    clientCpu: clientCores * 100,
    rssBefore: before.rss,
    rssStreaming: medianSample('rss'),
    heapPerCall: (retained.heap - before.heap) / calls,
    externalPerCall: (retained.external - before.external) / calls,
    loopDelayP99: loop.percentile(99) / 1e6,
    dropped,
    gc: gcFigures,
    wallMs: wall,
    phoneFramesSent: result.phoneFramesSent,
    phoneFramesReceived: result.phoneFramesReceived,
    phoneMarks: result.phoneMarks,
  };
}

/** The bare relay: /s/{key} frames are forwarded unchanged to the listeners of /l/{key}. */
async function startRelay() {
  const listeners = new Map<string, Set<WebSocket>>();
  const server = http.createServer();
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws, req) => {
    const [, kind, key] = (req.url ?? '').split('/');
    if (kind === 'l') {
      let set = listeners.get(key);
      if (!set) listeners.set(key, (set = new Set()));
      set.add(ws);
      ws.on('close', () => set!.delete(ws));
    } else {
      ws.on('message', (data, isBinary) => {
        for (const listener of listeners.get(key) ?? []) listener.send(data, { binary: isBinary });
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.close(() => resolve());
      }),
  };
}

async function main() {
  console.log(`media plane benchmark: ${CALLS} test-mode calls, 2 sides each streaming 20 ms frames (960 B) in real time`);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}`);
  console.log(`server and bare relay: this process; load: ${CLIENTS} child processes`);

  const workDir = await mkdtemp(path.join(os.tmpdir(), 'bench-media-'));
  const database: BenchDatabase | null = DB === 'postgres' ? await createBenchDatabase('postgres', workDir) : null;
  console.log(`database: ${DB === 'postgres' ? 'PostgreSQL (its processes\' CPU counted apart)' : 'in-memory PGlite in the server\'s process'}`);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: workDir,
    ADMIN_TOKEN: ADMIN,
    AUDIOSOCKET_PORT: '0',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...database?.env,
  });
  const server = await startServer(config, { memoryDatabase: !database, logger: pino({ level: 'silent' }) });
  try {
    const post = async (url: string, token: string, body: unknown, header = 'Authorization') => {
      const res = await fetch(`${server.url}${url}`, {
        method: 'POST',
        headers: { [header]: header === 'Authorization' ? `Bearer ${token}` : token, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const org = await post('/admin/orgs', ADMIN, { name: 'Bench' });
    const { key } = await post(`/admin/orgs/${org.org_id}/keys`, ADMIN, { mode: 'test' });
    const wsUrl = server.url.replace(/^http/, 'ws');
    /** Chunks dropped for slow listeners (the WebSocket transport counts them) since start. */
    const listenerChunksDropped = () => server.media.stats().transports.websocket.chunksDropped;
    /** The test-mode phases, in the order run (none with --only live). */
    const testMode: PhaseResult[] = [];
    if (!ONLY_LIVE) {
      process.stdout.write(`creating ${CALLS} calls...`);
      const media: Target[] = (await createTestCalls(server.url, key, CALLS)).flatMap((call) => [sideTarget(server.url, call.agent), sideTarget(server.url, call.customer)]);
      console.log(' done');
      const dropped0 = listenerChunksDropped();
      testMode.push(await runPhase('media plane', CALLS, media, true, () => listenerChunksDropped() - dropped0));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    const relay = await startRelay();
    const relayTargets = Array.from({ length: CALLS * 2 }, (_, i) => ({ stream: `ws://127.0.0.1:${relay.port}/s/${i}`, listen: `ws://127.0.0.1:${relay.port}/l/${i}` }));
    const relayResult = await runPhase('bare ws relay', CALLS, relayTargets, false, () => null);
    await relay.close();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (!ONLY_LIVE) {
      // Phone calls: the agent on WebSockets as above, the customer on a Twilio media stream (test mode:
      // each side hears its own voice; the phone's comes back as paced 20 ms mu-law media messages).
      process.stdout.write(`creating ${CALLS} phone calls...`);
      const phoneCalls = await createTestCalls(server.url, key, CALLS);
      const agents: Target[] = phoneCalls.map((call) => sideTarget(server.url, call.agent));
      const phones: PhoneTarget[] = phoneCalls.map((call) => ({ url: `${wsUrl}/media/twilio/${call.customer.stream.channel_id}`, token: call.customer.stream.token }));
      console.log(' done');
      const droppedPhones0 = listenerChunksDropped();
      testMode.push(await runPhase('phone calls', CALLS, agents, true, () => listenerChunksDropped() - droppedPhones0, phones));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // Inbound phone calls: each caller put through by the number's Voice webhook (signed TwiML request,
      // a new call, call.inbound), then the same load as the dialled phones.
      process.stdout.write(`putting ${CALLS} callers through...`);
      const inbound = await callInbound(server.url, ADMIN, org.org_id, key, server.app.db, CALLS);
      console.log(' done');
      const droppedInbound0 = listenerChunksDropped();
      testMode.push(
        await runPhase(
          'inbound phones',
          CALLS,
          inbound.map((call) => sideTarget(server.url, call.agent)),
          true,
          () => listenerChunksDropped() - droppedInbound0,
          inbound.map((call) => call.phone),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    // Live calls: a live key of a funded organization; interpretation by a stand-in that answers at once.
    server.app.engines.replaceLive({ interpretation: answeringAtOnce });
    const liveOrg = await post('/admin/orgs', ADMIN, { name: 'Bench live', balance: 1_000_000 });
    const { key: liveKey } = await post(`/admin/orgs/${liveOrg.org_id}/keys`, ADMIN, { mode: 'live' });
    const livePhase = async (name: string, transcript: boolean) => {
      process.stdout.write(`creating ${CALLS} live calls...`);
      const calls = await createTestCalls(server.url, liveKey, CALLS, { transcript });
      console.log(' done');
      // Each side's voice is heard, interpreted, by the other side.
      const crossed: Target[] = calls.flatMap((call) => [
        { stream: streamUrl(server.url, call.agent), listen: listenUrl(server.url, call.customer) },
        { stream: streamUrl(server.url, call.customer), listen: listenUrl(server.url, call.agent) },
      ]);
      const dropped = listenerChunksDropped();
      // How many statements stored them: the utterances of several calls share one (src/app/mediaPorts.ts).
      let statements = 0;
      const counting = (query: { sql: string }) => void (query.sql.includes('INSERT INTO call_utterances') && statements++);
      server.app.db.on('query', counting);
      const result = await runPhase(name, CALLS, crossed, true, () => listenerChunksDropped() - dropped).finally(() => server.app.db.off('query', counting));
      const stored = await server.app.db('call_utterances').whereIn('call_id', calls.map((call) => call.id)).count({ n: '*' });
      await endTestCalls(server.url, liveKey, calls);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return { result, utterances: Number(stored[0]!.n), statements };
    };
    // The two live phases take turns, REPS times (which goes first alternating), so that a change of the
    // machine's load falls on both; each figure judged is the median over the repetitions.
    const reps: Array<{ with: Awaited<ReturnType<typeof livePhase>>; without: Awaited<ReturnType<typeof livePhase>> }> = [];
    for (let rep = 0; rep < REPS; rep++) {
      if (rep % 2 === 0) {
        const withThem = await livePhase('live, transcripts', true);
        reps.push({ with: withThem, without: await livePhase('live, none kept', false) });
      } else {
        const without = await livePhase('live, none kept', false);
        reps.push({ with: await livePhase('live, transcripts', true), without });
      }
    }
    const last = reps[reps.length - 1]!;
    printTable([...testMode.slice(0, 1), relayResult, ...testMode.slice(1), last.with.result, last.without.result]);
    // A machine too busy to carry even the bare relay (its p95 above a frame), or whose load clients sent frames late,
    // judges nothing. The live phases' own latency is what is judged, so it never makes a run "too busy".
    const lateClients = (r: PhaseResult) => r.lateSends > r.sent / 100;
    // A phase whose window the server saw much shorter than asked (a load process that started measuring late, on a
    // machine that starved it) divided its CPU by almost nothing: its figures say nothing either.
    const cutShort = (r: PhaseResult) => r.wallMs < SECONDS * 1_000 * 0.9;
    const busy =
      (relayResult.latency?.p95 ?? Infinity) > 20 || [relayResult, ...reps.flatMap((r) => [r.with.result, r.without.result])].some((r) => lateClients(r) || cutShort(r));
    const verdict = (met: boolean) => (busy ? 'not judgeable: the machine is too busy' : met ? 'met' : 'NOT met');
    const withDb = (r: PhaseResult) => r.serverCpu + (r.databaseCpu ?? 0);
    const shares = reps.map((r) => ({
      latency: (r.with.result.latency?.p95 ?? NaN) - (relayResult.latency?.p95 ?? NaN),
      storage: (r.with.result.serverCpu - r.without.result.serverCpu) / r.without.result.serverCpu,
      storageWithDb: (withDb(r.with.result) - withDb(r.without.result)) / withDb(r.without.result),
    }));
    const each = (values: number[], digits = 1) => values.map((v) => v.toFixed(digits)).join(', ');
    const serverShareP95 = median(shares.map((s) => s.latency));
    const storageShare = median(shares.map((s) => s.storage));
    console.log(
      `\nlive calls, ${REPS} repetition(s): latency p95 through the server minus the bare relay's ${relayResult.latency?.p95.toFixed(1)} ms: ` +
        `median ${serverShareP95.toFixed(1)} ms (each: ${each(shares.map((s) => s.latency))}) (goal < 10 ms: ${verdict(serverShareP95 < 10)})\n` +
        `transcripts: ${last.with.utterances} utterances stored per repetition (the last in ${last.with.statements} statements); server CPU with them ${each(reps.map((r) => r.with.result.serverCpu))} %, ` +
        `without ${each(reps.map((r) => r.without.result.serverCpu))} %: median ${(storageShare * 100).toFixed(1)} % more (goal <= 10 %: ${verdict(storageShare <= 0.1)})` +
        (DB === 'postgres'
          ? `\n  with PostgreSQL's processes counted too: median ${(median(shares.map((s) => s.storageWithDb)) * 100).toFixed(1)} % more ` +
            `(each: ${each(shares.map((s) => s.storageWithDb * 100))} %)`
          : ''),
    );
    if (GC) {
      const collector = (r: PhaseResult) => {
        const gc = r.gc!;
        return `${gc.major} full (${gc.majorMs.toFixed(0)} ms), ${gc.minor} young (${gc.minorMs.toFixed(0)} ms), ${(promotedPerSecond(r) / 1024).toFixed(0)} KiB/s promoted`;
      };
      console.log(
        `the server's collector, each repetition:\n` +
          reps.map((r, i) => `  ${i + 1}. transcripts: ${collector(r.with.result)}; none kept: ${collector(r.without.result)}`).join('\n'),
      );
    }
  } finally {
    await server.stop();
    await database?.drop();
    await rm(workDir, { recursive: true, force: true });
  }
}

function printTable(results: PhaseResult[]) {
  const ms = (v: number | undefined) => (v === undefined ? 'n/a' : `${v.toFixed(1)} ms`);
  const kib = (v: number) => `${(v / 1024).toFixed(1)} KiB`;
  const mib = (v: number) => `${(v / 1024 / 1024).toFixed(0)} MiB`;
  const rows: Array<[string, (r: PhaseResult) => string]> = [
    ['calls / sockets', (r) => `${r.calls} / ${r.sockets}`],
    ['frames sent (measured window)', (r) => String(r.sent)],
    ['frames lost', (r) => `${r.lost} (${((r.lost / Math.max(1, r.sent)) * 100).toFixed(3)}%)`],
    ['frames out of order / corrupt', (r) => `${r.outOfOrder} / ${r.badFrames}`],
    ['latency p50 (every frame)', (r) => ms(r.latency?.p50)],
    ['latency p90 (every frame)', (r) => ms(r.latency?.p90)],
    ['latency p95 (every frame)', (r) => ms(r.latency?.p95)],
    ['latency p99 (every frame)', (r) => ms(r.latency?.p99)],
    ['latency max (every frame)', (r) => ms(r.latency?.max)],
    ['server CPU (% of one core)', (r) => `${r.serverCpu.toFixed(1)} %`],
    ['PostgreSQL CPU (% of one core)', (r) => (r.databaseCpu === null ? 'n/a' : `${r.databaseCpu.toFixed(1)} %`)],
    ['server CPU per call', (r) => `${(r.serverCpu / r.calls).toFixed(3)} %`],
    ['server RSS before connecting', (r) => mib(r.rssBefore)],
    ['server RSS while streaming (median)', (r) => mib(r.rssStreaming)],
    ['retained JS heap per call (after GC)', (r) => kib(r.heapPerCall)],
    ['retained buffers per call (after GC)', (r) => kib(r.externalPerCall)],
    ['server event-loop delay p99', (r) => ms(r.loopDelayP99)],
    ['chunks dropped for slow listeners', (r) => (r.dropped === null ? 'n/a' : String(r.dropped))],
    ['load clients CPU (% of one core, all)', (r) => `${r.clientCpu.toFixed(1)} %`],
    ['load client event-loop delay p99 (worst)', (r) => ms(r.clientLoopDelayP99)],
    ['client frames sent >20 ms late', (r) => String(r.lateSends)],
    ['phone media frames sent / heard back', (r) => (r.phoneFramesSent ? `${r.phoneFramesSent} / ${r.phoneFramesReceived}` : 'n/a')],
    ['phone marks echoed', (r) => (r.phoneFramesSent ? String(r.phoneMarks) : 'n/a')],
  ];
  if (GC) {
    const gc = (r: PhaseResult) => r.gc!;
    rows.push(
      ['GC young: collections / pause total', (r) => `${gc(r).minor} / ${ms(gc(r).minorMs)}`],
      ['GC full: collections / pause total', (r) => `${gc(r).major} / ${ms(gc(r).majorMs)}`],
      ['JS heap allocated per frame sent', (r) => `${(gc(r).allocated / Math.max(1, r.sent)).toFixed(0)} B`],
      ['promoted to the old generation', (r) => `${kib(promotedPerSecond(r))}/s`],
    );
  }
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const col = 18;
  console.log(`\n${''.padEnd(width)}${results.map((r) => r.name.padStart(col)).join('')}`);
  console.log('-'.repeat(width + col * results.length));
  for (const [label, value] of rows) console.log(`${label.padEnd(width)}${results.map((r) => value(r).padStart(col)).join('')}`);
  console.log(
    '\nLatency: from ws.send() of a frame on a stream socket to the client receiving the frame on the listen\n' +
      'socket (same process clock). The media plane wraps each frame in its own WAV chunk at once (44 bytes\n' +
      'of header more than the relay sends); the relay forwards the bare frame.\n' +
      'Memory: retained = heap/buffers after GC with every socket open, minus before connecting. RSS is the\n' +
      'whole server process (embedded database included); the relay runs second, in pages already mapped.\n' +
      'Phone calls: latency and lost frames are the agent side (WebSockets); the customer is a scripted Twilio\n' +
      'media stream (mu-law 8 kHz both ways, resampled to and from 24 kHz, paced 20 ms frames, marks echoed).\n' +
      'Inbound phones: the same, each caller put through by the Voice webhook of a number (new_call).',
  );
}

/** Frames per caption: a caption ends every 3 s of a side's speech (20 ms frames). */
const FRAMES_PER_CAPTION = 150;

/** An interpreter that answers at once: each frame comes back as it went; a final caption every FRAMES_PER_CAPTION frames. */
const answeringAtOnce: InterpreterFactory = (opts) => {
  // Each direction's turns end at their own moments, as in real conversations: every side starts streaming at
  // once, and turns counted from zero would all end in the same 20 ms, every utterance of every call together.
  let pushed = Math.floor(Math.random() * FRAMES_PER_CAPTION);
  let closed = false;
  queueMicrotask(() => opts.onStatus({ state: 'connected' }));
  return {
    provenance: { engine: 'bench', model: 'at-once' },
    push(pcm) {
      if (closed) return;
      opts.onAudio(pcm);
      if (++pushed % FRAMES_PER_CAPTION === 0) opts.onCaption({ final: true, original: 'what was said', translated: `[${opts.targetLanguage}] what was heard` });
    },
    async close() {
      closed = true;
    },
  };
};

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
