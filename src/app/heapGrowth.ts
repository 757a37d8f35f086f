// How far the server's JavaScript heaps (the main thread's and the embedded database's worker's) may grow
// past what a full collection left live before the next one.
//
// V8 sizes that room from how fast the old generation fills: a heap that promotes little (live calls: a few
// hundred KiB a second) gets as little as a tenth of what is live. A full collection itself promotes the
// young objects alive at its moment (1-4 MB), which can eat that room at once, so full collections came in
// bursts, one every 0.3-0.7 s (`--trace-gc`, bench:media's live phases), most of their work on V8's helper
// threads: at 200 live calls storing transcripts cost 15-17 % more of the server's CPU, most of it there.
// The room is now twice what is live (a factor of 3; V8's own goes up to 4 for heaps that fill fast): no full
// collection in a minute of 200 live calls, and transcripts cost 9.3 %. Half of what is live was not enough
// and, as a fixed factor below V8's own, slowed bench:rest's fan-out to 1,000 event streams
// (docs/performance.md has the figures of each).
import v8 from 'node:v8';

const HEAP_GROWING_PERCENT = 200;

/** V8 reads the setting whenever it sizes a heap after a full collection: it holds for every isolate of the process from then on. */
export function giveHeapRoom(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
