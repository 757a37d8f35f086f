// What the server process's garbage collector did during a phase of a benchmark (--gc), and, for a look
// at where its time and surviving memory went (--profile DIR), a V8 CPU profile and a sampling heap
// profile of what survived the young generation. The collector's figures hardly depend on the machine's
// load: they say what a change did even when timings are noisy.
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import v8 from 'node:v8';

export interface GcFigures {
  /** Young-generation collections (scavenges) and their total pause, ms. */
  minor: number;
  minorMs: number;
  /** Full (mark-compact) collections and their total pause, ms (incremental marking steps included). */
  major: number;
  majorMs: number;
  /** Bytes allocated on the JS heap, and bytes the scavenges moved to the old generation. */
  allocated: number;
  promoted: number;
}

type HeapSpaces = v8.HeapSpaceInfo[] | Array<{ spaceName: string; spaceUsedSize: number }>;

/** Bytes in the spaces a scavenge promotes into (old objects and large ones). */
function oldBytes(spaces: HeapSpaces): number {
  let bytes = 0;
  for (const space of spaces as Array<{ spaceName: string; spaceUsedSize: number }>) {
    if (space.spaceName === 'old_space' || space.spaceName === 'large_object_space') bytes += space.spaceUsedSize;
  }
  return bytes;
}

interface GcStatistic {
  gcType: string;
  cost: number;
  beforeGC: { heapStatistics: { usedHeapSize: number }; heapSpaceStatistics: HeapSpaces };
  afterGC: { heapStatistics: { usedHeapSize: number }; heapSpaceStatistics: HeapSpaces };
}

/** Starts counting the collector's work; the returned function stops and sums it. */
export function traceGc(): () => GcFigures {
  const profiler = new v8.GCProfiler();
  const usedAtStart = v8.getHeapStatistics().used_heap_size;
  profiler.start();
  return () => {
    const { statistics } = profiler.stop() as unknown as { statistics: GcStatistic[] };
    const usedAtEnd = v8.getHeapStatistics().used_heap_size;
    const figures: GcFigures = { minor: 0, minorMs: 0, major: 0, majorMs: 0, allocated: 0, promoted: 0 };
    let usedAfterLast = usedAtStart;
    for (const gc of statistics) {
      figures.allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - usedAfterLast);
      usedAfterLast = gc.afterGC.heapStatistics.usedHeapSize;
      if (gc.gcType === 'Scavenge') {
        figures.minor++;
        figures.minorMs += gc.cost / 1_000;
        figures.promoted += Math.max(0, oldBytes(gc.afterGC.heapSpaceStatistics) - oldBytes(gc.beforeGC.heapSpaceStatistics));
      } else {
        if (gc.gcType === 'MarkSweepCompact') figures.major++;
        figures.majorMs += gc.cost / 1_000;
      }
    }
    figures.allocated += Math.max(0, usedAtEnd - usedAfterLast);
    return figures;
  };
}

/**
 * Starts a CPU profile and a sampling heap profile of what the young generation does not collect (what
 * is promoted, kept or collected later by a full collection); the returned function writes both into
 * `dir` (made if missing) as `<name>.cpuprofile` and `<name>.heapprofile` (open them in Chrome's DevTools).
 */
export async function startProfiles(dir: string, name: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 8_192,
    includeObjectsCollectedByMinorGC: false,
    includeObjectsCollectedByMajorGC: true,
  });
  return async () => {
    const { profile: heap } = await session.post('HeapProfiler.stopSampling');
    const { profile: cpu } = await session.post('Profiler.stop');
    session.disconnect();
    const file = name.replace(/[^a-z0-9]+/gi, '-');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, `${file}.heapprofile`), JSON.stringify(heap));
    await writeFile(path.join(dir, `${file}.cpuprofile`), JSON.stringify(cpu));
  };
}
