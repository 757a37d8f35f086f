// bench:start's figures: start-up time and idle RSS per configuration, what each heavy part costs alone,
// and the goals of issue 13 on them. Pure.
import { mib, num, table, withSpread } from './format.js';
import { goal, type Goal } from './goals.js';
import { spread, type Spread } from './stats.js';

export type StartConfig = 'bare Express' | 'PGlite, fresh data dir' | 'PGlite, existing data dir' | 'PostgreSQL, existing database';

export interface StartSample {
  /** Spawn to the first 200 of /healthz. */
  startMs: number;
  /** Resident set size some seconds after that, idle. */
  rss: number;
}

export interface StartSummary {
  startS: Spread;
  rssMiB: Spread;
}

export function summarizeStarts(samples: readonly StartSample[]): StartSummary {
  return { startS: spread(samples.map((s) => s.startMs / 1000)), rssMiB: spread(samples.map((s) => s.rss / 1024 / 1024)) };
}

export function formatStarts(results: Partial<Record<StartConfig, StartSummary>>, idleSeconds: number): string {
  return table([
    ['configuration', 'start-up s', `RSS ${idleSeconds} s later, MiB`],
    ...Object.entries(results).map(([config, s]) => [config, withSpread(s.startS, 2), withSpread(s.rssMiB)]),
  ]);
}

export interface ProbeSample {
  ms: number;
  rssBefore: number;
  rssAfter: number;
}

export function formatProbes(results: Record<string, ProbeSample[] | Error>): string {
  return table([
    ['loaded alone in a fresh process', 'time s', 'RSS delta'],
    ...Object.entries(results).map(([name, samples]) =>
      samples instanceof Error
        ? [name, 'failed', samples.message.split('\n')[0]!.slice(0, 60)]
        : [name, withSpread(spread(samples.map((s) => s.ms / 1000)), 2), `+${mib(spread(samples.map((s) => s.rssAfter - s.rssBefore)).median)}`],
    ),
  ]);
}

export const START_GOALS = {
  postgres: { startS: 2, rssMiB: 200 },
  pglite: { startS: 4, rssMiB: 350 },
};

export function startGoals(results: Partial<Record<StartConfig, StartSummary>>): Goal[] {
  const s = (v: number) => `${num(v, 2)} s`;
  const m = (v: number) => `${num(v)} MiB`;
  const pg = results['PostgreSQL, existing database'];
  const lite = results['PGlite, existing data dir'];
  return [
    goal(`start-up on PostgreSQL (existing database) < ${START_GOALS.postgres.startS} s`, pg?.startS.median, '<', START_GOALS.postgres.startS, s),
    goal(`start-up on PGlite (existing data dir) < ${START_GOALS.pglite.startS} s`, lite?.startS.median, '<', START_GOALS.pglite.startS, s),
    goal(`idle RSS on PostgreSQL < ${START_GOALS.postgres.rssMiB} MiB`, pg?.rssMiB.median, '<', START_GOALS.postgres.rssMiB, m),
    goal(`idle RSS on PGlite (existing data dir) < ${START_GOALS.pglite.rssMiB} MiB`, lite?.rssMiB.median, '<', START_GOALS.pglite.rssMiB, m),
  ];
}
