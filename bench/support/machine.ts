// The machine a benchmark ran on and how busy it was: figures from a loaded machine are not comparable
// with a quiet one's, so every benchmark prints this at its start and end.
import os from 'node:os';

export function machineLine(): string {
  const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  return `load average ${load} (1/5/15 min) on ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'cpu'}), node ${process.version}`;
}
