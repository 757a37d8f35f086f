// The goals of issue 13 as data: each names what was measured, its value, the limit and whether it is
// met, so both benchmarks end with the same kind of verdict.

export interface Goal {
  /** What the goal asks, e.g. "GET /v1/account ratio on PostgreSQL >= 0.5". */
  name: string;
  /** The measured value as printed, e.g. "0.43" or "1.8 s"; "not measured" when the row did not run. */
  value: string;
  met: boolean | null;
}

type Comparison = '<' | '<=' | '>=';

/** A goal on one measured number; an unmeasured (undefined or NaN) value is neither met nor missed. */
export function goal(name: string, measured: number | undefined, comparison: Comparison, limit: number, show: (v: number) => string): Goal {
  if (measured === undefined || !Number.isFinite(measured)) return { name, value: 'not measured', met: null };
  const met = comparison === '<' ? measured < limit : comparison === '<=' ? measured <= limit : measured >= limit;
  return { name, value: show(measured), met };
}

export function formatGoals(goals: readonly Goal[]): string {
  const width = Math.max(...goals.map((g) => g.name.length));
  const verdict = (g: Goal) => (g.met === null ? 'not measured' : g.met ? 'met' : 'NOT met');
  const lines = goals.map((g) => `  ${g.name.padEnd(width)}  ${g.value.padStart(14)}  ${verdict(g)}`);
  const counted = goals.filter((g) => g.met !== null);
  const met = counted.filter((g) => g.met).length;
  return [...lines, `  ${met} of ${counted.length} measured goals met${counted.length < goals.length ? `, ${goals.length - counted.length} not measured` : ''}`].join('\n');
}
