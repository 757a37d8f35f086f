// Loaded into a server process with `node --import <this file>` by the benchmarks (the project's server
// and the bare baselines alike), so production code stays unchanged: measures the process's event-loop
// delay and answers over the IPC channel the benchmark opened.
//   {cmd: 'loop-reset'} -> {event: 'loop-reset'}
//   {cmd: 'loop-read'}  -> {event: 'loop', p50Ms, p99Ms, maxMs, rss}
// Plain JavaScript: it must load before any TypeScript loader and also in a built (dist/) server.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const RESOLUTION_MS = 5;

if (process.send) {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  process.on('message', (message) => {
    if (message?.cmd === 'loop-reset') {
      histogram.reset();
      process.send({ event: 'loop-reset' });
    } else if (message?.cmd === 'loop-read') {
      // After the histogram's own timer has run once more: a message read in the same turn as the end of
      // a long task would otherwise answer before that task's delay is recorded.
      setTimeout(() => {
        process.send({
          event: 'loop',
          p50Ms: histogram.percentile(50) / 1e6,
          p99Ms: histogram.percentile(99) / 1e6,
          maxMs: histogram.max / 1e6,
          rss: process.memoryUsage.rss(),
        });
      }, RESOLUTION_MS * 2);
    }
  });
  // The channel must not keep a server alive that would otherwise exit.
  process.channel?.unref();
}
