// bench:rest's figures: the repetitions of each row summarised (medians and spreads, the ratio to bare
// Express of the same repetition), printed as tables, and the goals of issue 13 judged on them. Pure.
import type { Backend } from './databases.js';
import { num, table, withSpread } from './format.js';
import { goal, type Goal } from './goals.js';
import type { LoopDelay } from './serverProcess.js';
import { spread, type Spread } from './stats.js';
import { errorCount, type WrkResult } from './wrk.js';

export type RowId =
  | 'healthz'
  | 'account'
  | 'call'
  | 'translate'
  | 'translate-idempotent'
  | 'message-post'
  | 'message-post-spread'
  | 'message-post-streams'
  | 'message-post-steady'
  | 'message-post-steady-streams'
  | 'message-list';

export interface Measurement {
  wrk: WrkResult;
  loop: LoopDelay;
  /** The project's CPU per request during the run, in microseconds (the baselines are not measured). */
  cpu?: CpuPerRequest;
}

export interface CpuPerRequest {
  /** The server process, all threads (PGlite's worker included). */
  server: number;
  /** PostgreSQL's processes; null on PGlite. */
  postgres: number | null;
}

/** One repetition of a row: the same request against each server, back to back. */
export interface Repetition {
  project: Measurement;
  express: Measurement;
  http: Measurement;
}

export interface RowSummary {
  label: string;
  reps: number;
  rps: Spread;
  expressRps: Spread;
  httpRps: Spread;
  /** Per repetition: project req/s / bare Express req/s of that repetition. */
  ratio: Spread;
  p50: Spread;
  p99: Spread;
  expressP50: Spread;
  expressP99: Spread;
  loopP50: Spread;
  loopP99: Spread;
  expressLoopP50: Spread;
  expressLoopP99: Spread;
  /** Failed requests of the project in all repetitions (socket errors and statuses >= 400). */
  errors: number;
  /** Microseconds of CPU per request: the server's process, and PostgreSQL's (NaN when not measured). */
  serverCpuUs: Spread;
  postgresCpuUs: Spread;
}

export function summarizeRow(label: string, reps: readonly Repetition[]): RowSummary {
  const of = (pick: (r: Repetition) => number) => spread(reps.map(pick));
  return {
    label,
    reps: reps.length,
    rps: of((r) => r.project.wrk.rps),
    expressRps: of((r) => r.express.wrk.rps),
    httpRps: of((r) => r.http.wrk.rps),
    ratio: of((r) => r.project.wrk.rps / r.express.wrk.rps),
    p50: of((r) => r.project.wrk.p50Ms),
    p99: of((r) => r.project.wrk.p99Ms),
    expressP50: of((r) => r.express.wrk.p50Ms),
    expressP99: of((r) => r.express.wrk.p99Ms),
    loopP50: of((r) => r.project.loop.p50Ms),
    loopP99: of((r) => r.project.loop.p99Ms),
    expressLoopP50: of((r) => r.express.loop.p50Ms),
    expressLoopP99: of((r) => r.express.loop.p99Ms),
    errors: reps.reduce((n, r) => n + errorCount(r.project.wrk), 0),
    serverCpuUs: spread(reps.flatMap((r) => (r.project.cpu ? [r.project.cpu.server] : []))),
    postgresCpuUs: spread(reps.flatMap((r) => (r.project.cpu?.postgres != null ? [r.project.cpu.postgres] : []))),
  };
}

export type BackendRows = Partial<Record<RowId, RowSummary>>;

export function formatRestTables(backendName: string, rows: BackendRows): string {
  const summaries = Object.values(rows);
  const pair = (a: Spread, b: Spread) => `${num(a.median, 1)} / ${num(b.median, 1)}`;
  const throughput = table([
    [backendName, 'req/s', 'bare Express req/s', 'node:http req/s', 'ratio', 'failed'],
    ...summaries.map((s) => [s.label, withSpread(s.rps), withSpread(s.expressRps), withSpread(s.httpRps), withSpread(s.ratio, 2), num(s.errors)]),
  ]);
  const measured = (value: Spread) => (value.count ? withSpread(value, 0) : '-');
  const latency = table([
    [backendName, 'p50 ms', 'p99 ms', 'Express p50 / p99', 'loop p50 / p99', 'Express loop p50 / p99', 'CPU us/req: server', 'PostgreSQL'],
    ...summaries.map((s) => [
      s.label,
      withSpread(s.p50, 1),
      withSpread(s.p99, 1),
      pair(s.expressP50, s.expressP99),
      pair(s.loopP50, s.loopP99),
      pair(s.expressLoopP50, s.expressLoopP99),
      measured(s.serverCpuUs),
      measured(s.postgresCpuUs),
    ]),
  ]);
  return `${throughput}\n\n${latency}`;
}

/** The ratio to bare Express each kind of row must reach (issue 13, Goal). */
const RATIO_GOALS: Array<{ row: RowId; label: string; min: Record<Backend, number> }> = [
  { row: 'account', label: 'GET /v1/account', min: { postgres: 0.5, pglite: 0.35 } },
  { row: 'call', label: 'GET /v1/calls/{id}', min: { postgres: 0.5, pglite: 0.35 } },
  { row: 'message-list', label: 'GET .../messages (20)', min: { postgres: 0.5, pglite: 0.35 } },
  { row: 'translate', label: 'POST /v1/translate (test)', min: { postgres: 0.4, pglite: 0.4 } },
];
export const MESSAGE_POST_P50_MS = 10;
export const ROW_P99_MS = 50;
export const LOOP_P99_MS = 20;
/**
 * "The same time" with open streams: at a steady load (each client pausing between posts), a message
 * post's p50 may be this much slower (or 1 ms, the larger).
 */
export const FAN_OUT_TOLERANCE = 0.2;

export function restGoals(results: Partial<Record<Backend, BackendRows>>, names: Record<Backend, string>): Goal[] {
  const goals: Goal[] = [];
  const ms = (v: number) => `${num(v, 1)} ms`;
  for (const backend of Object.keys(results) as Backend[]) {
    const rows = results[backend]!;
    const name = names[backend];
    for (const { row, label, min } of RATIO_GOALS) {
      goals.push(goal(`${label} on ${name}: ratio >= ${min[backend]}`, rows[row]?.ratio.median, '>=', min[backend], (v) => num(v, 2)));
    }
    if (backend === 'postgres') {
      goals.push(goal(`message post p50 on ${name} < ${MESSAGE_POST_P50_MS} ms`, rows['message-post']?.p50.median, '<', MESSAGE_POST_P50_MS, ms));
    }
    const worst = (pick: (s: RowSummary) => number) =>
      Object.values(rows).reduce<RowSummary | undefined>((w, s) => (!w || pick(s) > pick(w) ? s : w), undefined);
    const worstP99 = worst((s) => s.p99.median);
    goals.push(goal(`p99 of every row on ${name} < ${ROW_P99_MS} ms (worst: ${worstP99?.label ?? '-'})`, worstP99?.p99.median, '<', ROW_P99_MS, ms));
    const worstLoop = worst((s) => s.loopP99.median);
    goals.push(
      goal(`event-loop delay p99 on ${name} < ${LOOP_P99_MS} ms (worst: ${worstLoop?.label ?? '-'})`, worstLoop?.loopP99.median, '<', LOOP_P99_MS, ms),
    );
    goals.push(fanOutGoal(name, rows['message-post-steady'], rows['message-post-steady-streams']));
  }
  return goals;
}

function fanOutGoal(name: string, none: RowSummary | undefined, streams: RowSummary | undefined): Goal {
  const title = `message post p50 on ${name}, steady load, with open streams = without (+${FAN_OUT_TOLERANCE * 100}% or 1 ms)`;
  if (!none || !streams) return { name: title, value: 'not measured', met: null };
  const allowed = Math.max(1, none.p50.median * FAN_OUT_TOLERANCE);
  return {
    name: title,
    value: `${num(streams.p50.median, 1)} vs ${num(none.p50.median, 1)} ms`,
    met: streams.p50.median - none.p50.median <= allowed,
  };
}
