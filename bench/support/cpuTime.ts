// CPU time that processes have used, from /proc (Linux): the server's process (all its threads, the
// PGlite worker among them) and PostgreSQL's (every `postgres` process on the machine, so the
// benchmark's database should be the only busy one). Divided by the requests of a run, it says what a
// request costs each side, which throughput alone does not on two cores the two share.
import { readdir, readFile } from 'node:fs/promises';

/** Kernel clock ticks per second (USER_HZ): 100 on every Linux that Node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * The fields of a /proc/<pid>/stat line after "(comm) ", from field 3 (state) on: utime (field 14) is at index 11,
 * stime 12, cutime 13, cstime 14 (man 5 proc). The command name may hold spaces and parentheses.
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Clock ticks as milliseconds. */
export const ticksToMs = (ticks: number) => (ticks * 1000) / TICKS_PER_SECOND;

/** `comm` and user + system CPU milliseconds of a /proc/<pid>/stat line. */
export function parseStat(stat: string): { comm: string; cpuMs: number } {
  const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  const fields = statFields(stat);
  return { comm, cpuMs: ticksToMs(Number(fields[11]) + Number(fields[12])) };
}

export async function processCpuMs(pid: number): Promise<number> {
  return parseStat(await readFile(`/proc/${pid}/stat`, 'utf8')).cpuMs;
}

/** CPU milliseconds of each process named `postgres` now, by pid. */
export type PostgresCpu = Map<number, number>;

export async function postgresCpu(): Promise<PostgresCpu> {
  const byPid: PostgresCpu = new Map();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => null);
    if (stat === null) continue;
    const { comm, cpuMs } = parseStat(stat);
    if (comm === 'postgres') byPid.set(Number(entry), cpuMs);
  }
  return byPid;
}

/**
 * CPU milliseconds PostgreSQL's processes used since `before`: each process's own difference, a process
 * started meanwhile counted whole. A process that ended meanwhile (a connection closed) is left out: what
 * it used is no longer to be read, and subtracting its earlier total made some runs' figure negative.
 */
export async function postgresCpuSinceMs(before: PostgresCpu): Promise<number> {
  return cpuSpentMs(before, await postgresCpu());
}

/** What the processes of `now` used since `before` (those that ended meanwhile left out). */
export function cpuSpentMs(before: PostgresCpu, now: PostgresCpu): number {
  let total = 0;
  for (const [pid, cpuMs] of now) total += cpuMs - (before.get(pid) ?? 0);
  return total;
}
