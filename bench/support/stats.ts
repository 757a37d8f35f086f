// Medians and spreads of a benchmark's repetitions: the figure printed is the median, the spread
// (min-max) says how far the repetitions were apart on a machine whose load moves.

export interface Spread {
  median: number;
  min: number;
  max: number;
  count: number;
}

/** The median of the values (the mean of the middle two for an even count); NaN when there are none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, count: 0 };
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), count: values.length };
}

/** Percentiles of many values (every frame's latency of a run). */
export interface Distribution {
  count: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

/** The distribution of the values (the p-th percentile is the value below which p % of them fall); null when there are none. */
export function distribution(values: readonly number[]): Distribution | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { count: sorted.length, p50: at(0.5), p90: at(0.9), p95: at(0.95), p99: at(0.99), max: sorted[sorted.length - 1]! };
}
