// A server the benchmarks run in its own process, as a user would: the project's server by the command
// `npm start` runs, or a bare baseline. With the event-loop preload (loopDelayPreload.mjs) the benchmark
// can read the process's event-loop delay over IPC while a load runs against it.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort } from '../../test/support/freePort.js';
import { ask } from './ipc.js';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = path.resolve(BENCH_DIR, '..');
const PRELOAD = pathToFileURL(path.join(BENCH_DIR, 'support', 'loopDelayPreload.mjs')).href;

export interface LoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface ServerSpec {
  name: string;
  /** node's arguments: options, entry file, its arguments. */
  nodeArgs: string[];
  env: Record<string, string | undefined>;
  /** Answers 200 once the server is ready. */
  readyPath: string;
  /** stdout and stderr of the server go here (for the error message when it fails). */
  logFile: string;
  /** Load the event-loop preload (and open the IPC channel it answers on). */
  measureLoop: boolean;
}

export interface ServerProcess {
  name: string;
  url: string;
  pid: number;
  /** Milliseconds from spawn to the first 200 on readyPath. */
  startMs: number;
  loopReset(): Promise<void>;
  loopRead(): Promise<LoopDelay>;
  /** Resident set size of the process now, from /proc (Linux). */
  rss(): Promise<number>;
  stop(): Promise<void>;
}

export async function startServerProcess(spec: ServerSpec): Promise<ServerProcess> {
  const port = await freePort();
  const log = openSync(spec.logFile, 'a');
  const args = spec.measureLoop ? ['--import', PRELOAD, ...spec.nodeArgs] : spec.nodeArgs;
  const started = performance.now();
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...spec.env, PORT: String(port) },
    stdio: ['ignore', log, log, ...(spec.measureLoop ? (['ipc'] as const) : [])],
  });
  closeSync(log);
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  try {
    await waitReady(url + spec.readyPath, exited);
  } catch (err) {
    proc.kill('SIGKILL');
    const tail = (await readFile(spec.logFile, 'utf8').catch(() => '')).split('\n').slice(-30).join('\n');
    throw new Error(`${spec.name} did not start: ${(err as Error).message}\n--- ${spec.logFile} (last lines) ---\n${tail}`);
  }
  const startMs = performance.now() - started;
  return {
    name: spec.name,
    url,
    pid: proc.pid!,
    startMs,
    // The preload answers at once; 30 s means it is not loaded (or the server is stuck).
    loopReset: async () => void (await ask(proc, { cmd: 'loop-reset' }, 'loop-reset', 30_000)),
    loopRead: async () => (await ask(proc, { cmd: 'loop-read' }, 'loop', 30_000)) as unknown as LoopDelay,
    rss: () => processRss(proc.pid!),
    stop: () => stop(proc, exited),
  };
}

/** Polls every 20 ms (a refused connection costs the server nothing) until the path answers 200. */
async function waitReady(url: string, exited: Promise<number | null>, timeoutMs = 120_000): Promise<void> {
  let gone: number | null | undefined;
  void exited.then((code) => (gone = code));
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (gone !== undefined) throw new Error(`it exited with code ${gone}`);
    const ok = await fetch(url).then(
      (res) => (void res.body?.cancel(), res.status === 200),
      () => false,
    );
    if (ok) return;
    await sleep(20);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s`);
}

export async function processRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!kib) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kib[1]) * 1024;
}

async function stop(proc: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

/** The environment of a spawned server: this process's, without the project's own settings, plus these. */
export function serverEnv(vars: Record<string, string>): Record<string, string | undefined> {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'ADMIN_TOKEN', 'PORT', 'HOST', 'LOG_LEVEL', 'NODE_OPTIONS']) delete env[name];
  return { ...env, ...vars };
}
