// bench:cluster's calls under load, side by side (pure: the unit tests check it): N test-mode calls whose
// sockets are all on the room's instance ("local"), and N whose agent's listen socket and customer's
// stream socket are on the other instance, relayed through Redis ("relayed"): each frame crosses Redis
// once, in one direction or the other. Each repetition runs one phase of each, in alternating order.
import { goal, type Goal } from './goals.js';
import { num, table, withSpread } from './format.js';
import { median, spread, type Distribution } from './stats.js';

export type CallLayout = 'local' | 'relayed';

export interface CallPhase {
  layout: CallLayout;
  rep: number;
  calls: number;
  /** Milliseconds of the measured window. */
  wallMs: number;
  /** CPU milliseconds the room's instance used meanwhile, and the other instance. */
  roomCpuMs: number;
  otherCpuMs: number;
  sent: number;
  lost: number;
  latency: Distribution | null;
}

/** The goals of issue 34 for relayed calls. */
export const RELAYED_CPU_RATIO_LIMIT = 1.3;
export const ADDED_P99_LIMIT_MS = 5;

/** Both instances' CPU per call, in percent of one core. */
export const cpuPerCall = (phase: CallPhase) => ((phase.roomCpuMs + phase.otherCpuMs) / phase.wallMs / phase.calls) * 100;

const percentOfCore = (cpuMs: number, phase: CallPhase) => (cpuMs / phase.wallMs) * 100;

export interface CallComparison {
  /** Per repetition, relayed CPU per call / local CPU per call. */
  cpuRatio: number[];
  /** Per repetition, relayed p99 - local p99, in ms. */
  addedP99Ms: number[];
}

/** Each repetition's relayed phase against its local one (repetitions missing either are left out). */
export function compareCalls(phases: readonly CallPhase[]): CallComparison {
  const cpuRatio: number[] = [];
  const addedP99Ms: number[] = [];
  for (const rep of new Set(phases.map((p) => p.rep))) {
    const local = phases.find((p) => p.rep === rep && p.layout === 'local');
    const relayed = phases.find((p) => p.rep === rep && p.layout === 'relayed');
    if (!local || !relayed) continue;
    cpuRatio.push(cpuPerCall(relayed) / cpuPerCall(local));
    if (local.latency && relayed.latency) addedP99Ms.push(relayed.latency.p99 - local.latency.p99);
  }
  return { cpuRatio, addedP99Ms };
}

export function callGoals(comparison: CallComparison): Goal[] {
  return [
    goal(`relayed call's server CPU / local call's <= ${RELAYED_CPU_RATIO_LIMIT}`, median(comparison.cpuRatio), '<=', RELAYED_CPU_RATIO_LIMIT, (v) => `${num(v, 2)}x`),
    goal(`relayed call's added p99 latency < ${ADDED_P99_LIMIT_MS} ms`, median(comparison.addedP99Ms), '<', ADDED_P99_LIMIT_MS, (v) => `${num(v, 2)} ms`),
  ];
}

/** Every phase as it ran, then the medians of each layout and of the per-repetition comparisons. */
export function formatCallPhases(phases: readonly CallPhase[]): string {
  const ms = (phase: CallPhase, key: 'p50' | 'p99') => (phase.latency ? num(phase.latency[key], 2) : 'n/a');
  const lost = (phase: CallPhase) => `${phase.lost} (${num((phase.lost / Math.max(1, phase.sent)) * 100, 2)} %)`;
  const each = table([
    ['rep', 'calls', "room's instance CPU %", 'other instance CPU %', 'CPU % per call', 'p50 ms', 'p99 ms', 'frames lost'],
    ...phases.map((p) => [
      `${p.rep} ${p.layout}`,
      String(p.calls),
      num(percentOfCore(p.roomCpuMs, p), 1),
      num(percentOfCore(p.otherCpuMs, p), 1),
      num(cpuPerCall(p), 3),
      ms(p, 'p50'),
      ms(p, 'p99'),
      lost(p),
    ]),
  ]);
  const layouts: CallLayout[] = ['local', 'relayed'];
  const of = (layout: CallLayout) => phases.filter((p) => p.layout === layout);
  const latencies = (layout: CallLayout, key: 'p50' | 'p99') => of(layout).flatMap((p) => (p.latency ? [p.latency[key]] : []));
  const summary = table([
    ['calls', 'CPU % per call', 'p50 ms', 'p99 ms', 'frames lost'],
    ...layouts.map((layout) => [
      layout,
      withSpread(spread(of(layout).map(cpuPerCall)), 3),
      num(median(latencies(layout, 'p50')), 2),
      withSpread(spread(latencies(layout, 'p99')), 2),
      String(of(layout).reduce((n, p) => n + p.lost, 0)),
    ]),
  ]);
  const comparison = compareCalls(phases);
  return [
    each,
    '',
    `medians of ${of('local').length} (spread)`,
    '',
    summary,
    '',
    `relayed / local CPU per call: ${withSpread(spread(comparison.cpuRatio), 2)}`,
    `relayed p99 - local p99: ${withSpread(spread(comparison.addedP99Ms), 2)} ms`,
  ].join('\n');
}
