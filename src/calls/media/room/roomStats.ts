// What a room counts of how the call goes (src/calls/mediaStats.ts): how long each side was present
// (had a source) and was interpreted, the chunks its listeners dropped, the interpretation latency of
// each speaker's turns.
import { emptyMediaStats, MAX_LATENCY_SAMPLES, type MediaStatsSnapshot } from '../../mediaStats.js';
import { SIDES, type Side } from '../../side.js';

type Timed = 'present_ms' | 'interpreted_ms';

export class RoomStats {
  private readonly counted = emptyMediaStats();
  private readonly since: Record<Timed, Record<Side, number | null>> = {
    present_ms: { agent: null, customer: null },
    interpreted_ms: { agent: null, customer: null },
  };

  /** A side is present (has a source) or interpreted, or no longer. */
  timed(key: Timed, side: Side, on: boolean, now: number): void {
    const since = this.since[key][side];
    if (on && since === null) this.since[key][side] = now;
    else if (!on && since !== null) {
      this.counted[key][side] += now - since;
      this.since[key][side] = null;
    }
  }

  dropped(side: Side, chunks: number): void {
    this.counted.frames_dropped[side] += chunks;
  }

  latency(speaker: Side, ms: number): void {
    const samples = this.counted.latency_ms[speaker];
    samples.push(ms);
    if (samples.length > MAX_LATENCY_SAMPLES) samples.shift();
  }

  /** What was counted up to `now`, with what is running counted until then and `dropping` (listeners still there) added. */
  snapshot(now: number, dropping: Record<Side, number>): MediaStatsSnapshot {
    const snapshot = emptyMediaStats();
    for (const side of SIDES) {
      for (const key of ['present_ms', 'interpreted_ms'] as const) {
        const since = this.since[key][side];
        snapshot[key][side] = this.counted[key][side] + (since === null ? 0 : now - since);
      }
      snapshot.frames_dropped[side] = this.counted.frames_dropped[side] + dropping[side];
      snapshot.latency_ms[side] = [...this.counted.latency_ms[side]];
    }
    return snapshot;
  }
}
