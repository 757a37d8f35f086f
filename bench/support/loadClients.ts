// The load processes of the media benchmarks (bench/mediaLoad.ts, forked): the sockets' clients run
// apart from the servers, so their CPU is not counted as the servers', and in several processes, so no
// one client's event loop adds its own queueing. A target's stream and listen socket stay in one process
// (one clock for the latency of its frames).
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { LoadResult, PhoneTarget, Target } from '../mediaLoad.js';
import { ask, next } from './ipc.js';
import { BENCH_DIR } from './serverProcess.js';

export interface StreamTiming {
  warmupMs: number;
  measureMs: number;
  /** How long after the measured window the listen sockets are still heard (frames on their way). */
  drainMs: number;
}

export interface Streaming {
  /** Every process is in its measured window. */
  measuring: Promise<void>;
  /** Every process has left it: the load processes' CPU meanwhile, in cores (1: one core busy), together. */
  ended: Promise<number>;
  /** What every process measured, together. */
  results: Promise<LoadResult>;
}

/** Connecting sockets under load: a minute per wave at most. */
const CONNECT_MS = 60_000;

interface Slice {
  targets: Target[];
  phones: PhoneTarget[];
}

export class LoadClients {
  private constructor(
    private readonly procs: ChildProcess[],
    private readonly slices: Slice[],
  ) {}

  /** `count` load processes (fewer if there are fewer targets), each given every count-th target and phone. */
  static fork(targets: Target[], phones: PhoneTarget[], count: number): LoadClients {
    const processes = Math.max(1, Math.min(count, Math.max(targets.length, phones.length)));
    const slices = Array.from({ length: processes }, (_, i) => ({
      targets: targets.filter((_, j) => j % processes === i),
      phones: phones.filter((_, j) => j % processes === i),
    }));
    const file = path.join(BENCH_DIR, 'mediaLoad.ts');
    const procs = slices.map(() => fork(file, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    return new LoadClients(procs, slices);
  }

  get count(): number {
    return this.procs.length;
  }

  /** Opens the sockets of the first wave (both of a target without `later`), and the phones. */
  async connect(wav: boolean): Promise<void> {
    await this.all((proc, i) => ask(proc, { cmd: 'connect', ...this.slices[i]!, wav }, 'connected', CONNECT_MS));
  }

  /** Opens the sockets marked `later`. */
  async connectLater(): Promise<void> {
    await this.all((proc) => ask(proc, { cmd: 'connect-later' }, 'connected', CONNECT_MS));
  }

  /** Streams in real time: a warm-up, the measured window, the drain. */
  stream(timing: StreamTiming): Streaming {
    const total = timing.warmupMs + timing.measureMs + timing.drainMs + CONNECT_MS;
    // Every reply is awaited from the start: none can come before its listener.
    const measuring = this.all((proc) => next(proc, 'measure-start', total));
    const ended = this.all((proc) => next(proc, 'measure-end', total));
    const results = this.all((proc) => next(proc, 'results', total));
    for (const proc of this.procs) proc.send({ cmd: 'stream', ...timing });
    return {
      measuring: measuring.then(() => undefined),
      ended: ended.then((ends) => ends.reduce((cores, end) => cores + (end.clientCpu as number), 0)),
      results: results.then((all) => combine(all as unknown as LoadResult[])),
    };
  }

  /** Closes every socket; the processes exit. */
  async disconnect(): Promise<void> {
    await this.all((proc) => ask(proc, { cmd: 'disconnect' }, 'disconnected', CONNECT_MS));
  }

  /** Ends the processes at once (after a failure). */
  kill(): void {
    for (const proc of this.procs) if (proc.exitCode === null) proc.kill('SIGKILL');
  }

  private all<T>(each: (proc: ChildProcess, index: number) => Promise<T>): Promise<T[]> {
    return Promise.all(this.procs.map(each));
  }
}

function combine(results: LoadResult[]): LoadResult {
  const sum = (key: Exclude<keyof LoadResult, 'latencies' | 'clientLoopDelayP99'>) => results.reduce((n, r) => n + r[key], 0);
  return {
    sent: sum('sent'),
    received: sum('received'),
    lost: sum('lost'),
    badFrames: sum('badFrames'),
    outOfOrder: sum('outOfOrder'),
    lateSends: sum('lateSends'),
    clientLoopDelayP99: Math.max(...results.map((r) => r.clientLoopDelayP99)),
    phoneFramesSent: sum('phoneFramesSent'),
    phoneFramesReceived: sum('phoneFramesReceived'),
    phoneMarks: sum('phoneMarks'),
    latencies: results.flatMap((r) => r.latencies),
  };
}
