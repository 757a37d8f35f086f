// CPU time of the processes a test file starts, from /proc (Linux), for test/support/costSetup.ts. A process
// the worker waits for adds its time, and that of the children it waited for, to the worker's cutime; Chromium's
// renderers, GPU and storage processes are children of its zygotes, which the browser leaves behind when it
// exits, so their time (half of what a browser test costs) reaches no cutime and is counted here instead.
import { readdirSync, readFileSync } from 'node:fs';
import { statFields, ticksToMs } from '../../bench/support/cpuTime.js';

/** On globalThis, so that costSetup and browser.ts share it whatever module instances vitest gives each file. */
const UNREAPED = Symbol.for('lia.test.unreapedCpuMs');
const holder = globalThis as { [UNREAPED]?: number };

/** CPU milliseconds counted by `closeCounted` in this process so far. */
export const unreapedCpuMs = (): number => holder[UNREAPED] ?? 0;

interface Usage {
  ppid: number;
  /** utime + stime (its own) and cutime + cstime (the children it waited for), ms. */
  ownMs: number;
  childrenMs: number;
}

function usage(pid: number | 'self'): Usage | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // ended meanwhile
  }
  const fields = statFields(stat);
  return {
    ppid: Number(fields[1]),
    ownMs: ticksToMs(Number(fields[11]) + Number(fields[12])),
    childrenMs: ticksToMs(Number(fields[13]) + Number(fields[14])),
  };
}

/** This process's CPU milliseconds and those of the children it waited for. */
export function selfCpuMs(): number {
  const self = usage('self')!;
  return self.ownMs + self.childrenMs;
}

function allProcesses(): Map<number, Usage> {
  const byPid = new Map<number, Usage>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const found = usage(Number(entry));
    if (found) byPid.set(Number(entry), found);
  }
  return byPid;
}

/** Pids of this process's children now. */
export function childPids(): number[] {
  return [...allProcesses()].filter(([, { ppid }]) => ppid === process.pid).map(([pid]) => pid);
}

/** CPU milliseconds of `root` and of its live descendants, each with the children it waited for. */
function treeCpuMs(root: number): number {
  const processes = allProcesses();
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of processes) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  let total = 0;
  for (const queue = [root]; queue.length; ) {
    const pid = queue.pop()!;
    const found = processes.get(pid);
    if (found) total += found.ownMs + found.childrenMs;
    queue.push(...(children.get(pid) ?? []));
  }
  return total;
}

/**
 * Runs `close`, which ends the process tree of this process's child `root`, and counts what the tree cost beyond
 * what its reaped root brings to this process's cutime. Its processes are read just before `close` (afterwards
 * they are gone), so what the orphans spend shutting down is missed.
 */
export async function closeCounted(root: number, close: () => Promise<void>): Promise<void> {
  const treeMs = treeCpuMs(root);
  const reapedBefore = usage('self')!.childrenMs;
  await close();
  const reapedMs = usage('self')!.childrenMs - reapedBefore;
  holder[UNREAPED] = unreapedCpuMs() + Math.max(0, treeMs - reapedMs);
}
