// How a call's media went, as its rooms count it (DESIGN.md §12, "How the call went"): kept per call by
// merging what each room of the call counted, and shown as `stats` once the call has ended.
import type { Side } from './side.js';

/** What a room counted, by side: presence and interpretation time, listeners' dropped chunks, latencies by speaker. */
export interface MediaStatsSnapshot {
  present_ms: Record<Side, number>;
  interpreted_ms: Record<Side, number>;
  frames_dropped: Record<Side, number>;
  /** Per speaker: ms from the end of each turn of its speech to the first interpreted audio sent to the listener. */
  latency_ms: Record<Side, number[]>;
}

/** Latency samples kept per direction of a call: enough for its percentiles, bounded whatever its length. */
export const MAX_LATENCY_SAMPLES = 1_000;

export const emptyMediaStats = (): MediaStatsSnapshot => ({
  present_ms: { agent: 0, customer: 0 },
  interpreted_ms: { agent: 0, customer: 0 },
  frames_dropped: { agent: 0, customer: 0 },
  latency_ms: { agent: [], customer: [] },
});

export function mergeMediaStats(a: MediaStatsSnapshot, b: MediaStatsSnapshot): MediaStatsSnapshot {
  const sum = (key: 'present_ms' | 'interpreted_ms' | 'frames_dropped') => ({ agent: a[key].agent + b[key].agent, customer: a[key].customer + b[key].customer });
  return {
    present_ms: sum('present_ms'),
    interpreted_ms: sum('interpreted_ms'),
    frames_dropped: sum('frames_dropped'),
    latency_ms: {
      agent: [...a.latency_ms.agent, ...b.latency_ms.agent].slice(-MAX_LATENCY_SAMPLES),
      customer: [...a.latency_ms.customer, ...b.latency_ms.customer].slice(-MAX_LATENCY_SAMPLES),
    },
  };
}

/** The nearest-rank percentile; null without samples. */
export function percentile(samples: readonly number[], p: number): number | null {
  if (!samples.length) return null;
  const sorted = [...samples].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
