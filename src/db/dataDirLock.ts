import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

/** What the lock file records about the process that holds it. */
export interface LockHolder {
  pid: number;
  hostname: string;
  startedAt: string;
  /**
   * Linux: when the holder process started, in clock ticks since boot (/proc/<pid>/stat field 22).
   * A pid is reused by later processes; pid and start together name one process, whatever the clock.
   */
  startTicks?: number;
}

/** Another process (or an earlier open in this one) is using the data directory. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';

  constructor(
    readonly dataDir: string,
    readonly lockPath: string,
    readonly holder: LockHolder | undefined,
    message: string,
  ) {
    super(message);
  }
}

const LOCK_FILE = 'server.lock';
// A lock file we cannot parse is normally one being written right now; only after
// this long do we believe its writer died between creating and filling it.
const UNREADABLE_LOCK_GRACE_MS = 10_000;
// Each attempt either takes the lock or finds it held; several are only needed when
// other processes race us for a stale lock.
const MAX_ATTEMPTS = 5;
// USER_HZ: the unit of /proc/<pid>/stat start times, 100 on every mainstream Linux architecture.
const CLOCK_TICKS_PER_SECOND = 100;
// A lock without startTicks (written by an older version) is judged by wall clock: /proc's boot time
// is whole seconds, so a process started this little after the lock was written may still be its writer.
const START_TIME_SLACK_MS = 2_000;

/**
 * Takes the exclusive lock on `dataDir` (PGlite has none of its own: two processes on
 * one data directory silently lose data). Returns the function that releases it.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const absoluteDir = resolve(dataDir);
  const lockPath = join(absoluteDir, LOCK_FILE);
  await mkdir(absoluteDir, { recursive: true });
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const holder = await ownHolder();
    if (await tryCreateLock(lockPath, holder)) return releaser(lockPath, holder);
    await removeIfStale(absoluteDir, lockPath);
  }
  throw new DataDirLockedError(
    absoluteDir,
    lockPath,
    undefined,
    `Could not lock DATA_DIR ${absoluteDir}: other processes keep taking ${lockPath}. Stop them or use another DATA_DIR.`,
  );
}

async function ownHolder(): Promise<LockHolder> {
  const startTicks = await processStartTicks(process.pid);
  return {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date().toISOString(),
    ...(startTicks === undefined ? {} : { startTicks }),
  };
}

async function tryCreateLock(lockPath: string, holder: LockHolder): Promise<boolean> {
  try {
    await writeFile(lockPath, JSON.stringify(holder), { flag: 'wx' });
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
}

function releaser(lockPath: string, holder: LockHolder): () => Promise<void> {
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    const current = (await readLock(lockPath))?.holder;
    // Someone may have deleted our file and taken the lock by hand: leave theirs alone.
    if (current?.pid === holder.pid && current.startedAt === holder.startedAt) {
      await rm(lockPath, { force: true });
    }
  };
}

interface LockSnapshot {
  holder: LockHolder | undefined;
  // Identifies this very file, so a takeover never removes a lock created after we looked.
  ino: number;
  mtimeMs: number;
}

/** Throws DataDirLockedError when the lock is live; removes it when its holder is gone. */
async function removeIfStale(dataDir: string, lockPath: string): Promise<void> {
  const snapshot = await readLock(lockPath);
  if (!snapshot) return; // released meanwhile: just try again
  const refusal = await refusalMessage(dataDir, lockPath, snapshot);
  if (refusal) throw new DataDirLockedError(dataDir, lockPath, snapshot.holder, refusal);
  await removeSnapshot(lockPath, snapshot);
}

/** Why the lock must be respected, or undefined when it is stale. */
async function refusalMessage(dataDir: string, lockPath: string, { holder, mtimeMs }: LockSnapshot): Promise<string | undefined> {
  if (!holder) {
    if (Date.now() - mtimeMs > UNREADABLE_LOCK_GRACE_MS) return undefined;
    return `DATA_DIR ${dataDir} is being locked by another server process right now (${lockPath} is not written yet). Stop it or use another DATA_DIR.`;
  }
  if (holder.hostname !== hostname()) {
    // We cannot see processes on another host, so we cannot prove this lock stale.
    return `Another server process (pid ${holder.pid} on host ${holder.hostname}) is using DATA_DIR ${dataDir}. Stop it or use another DATA_DIR; if no server runs there any more, delete ${lockPath}.`;
  }
  if (holder.pid === process.pid) {
    // Same pid but written before we started: an earlier incarnation (containers reuse pids).
    if (Date.parse(holder.startedAt) < performance.timeOrigin) return undefined;
    return `DATA_DIR ${dataDir} is already open in this server process (pid ${holder.pid}): close the first database before opening it again, or use another DATA_DIR.`;
  }
  if (!isProcessAlive(holder.pid)) return undefined;
  // The pid lives, but a process that died may have left it to an unrelated one (a restart after a
  // crash, in a container where pids start over).
  if ((await isLockWriter(holder)) === false) return undefined;
  return `Another server process (pid ${holder.pid}) is using DATA_DIR ${dataDir}. Stop it or use another DATA_DIR.`;
}

/** Whether the live process `holder.pid` is the one that wrote the lock; undefined when we cannot tell. */
async function isLockWriter(holder: LockHolder): Promise<boolean | undefined> {
  const ticks = await processStartTicks(holder.pid);
  if (ticks === undefined) return undefined;
  if (holder.startTicks !== undefined) return ticks === holder.startTicks;
  const bootMs = await bootTimeMs();
  if (bootMs === undefined) return undefined;
  const startedMs = bootMs + (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  // A process cannot have written a lock before it started.
  return startedMs <= Date.parse(holder.startedAt) + START_TIME_SLACK_MS;
}

/** Linux: when `pid` started, in clock ticks since boot; undefined elsewhere or when it is gone. */
async function processStartTicks(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command) may hold spaces and parentheses: count from after its closing one,
    // where field 3 begins; field 22 is the start time.
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[22 - 3]);
    return Number.isSafeInteger(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

/** Linux: the boot time by the current wall clock (`btime` of /proc/stat), in ms. */
async function bootTimeMs(): Promise<number | undefined> {
  try {
    const match = /^btime (\d+)$/m.exec(await readFile('/proc/stat', 'utf8'));
    return match ? Number(match[1]) * 1000 : undefined;
  } catch {
    return undefined;
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return errorCode(error) === 'EPERM';
  }
}

/**
 * Removes the stale lock file we inspected. Moving it aside first and checking its
 * inode means that if another process replaced it in the meantime, we put theirs back
 * instead of deleting a live lock.
 */
async function removeSnapshot(lockPath: string, snapshot: LockSnapshot): Promise<void> {
  const aside = `${lockPath}.stale-${randomUUID()}`;
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if ((await stat(aside)).ino !== snapshot.ino) {
    await link(aside, lockPath).catch(ignoreCode('EEXIST'));
  }
  await rm(aside, { force: true });
}

async function readLock(lockPath: string): Promise<LockSnapshot | undefined> {
  try {
    const stats = await stat(lockPath);
    const text = await readFile(lockPath, 'utf8');
    return { holder: parseHolder(text), ino: stats.ino, mtimeMs: stats.mtimeMs };
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (isLockHolder(value)) return value;
  } catch {
    // Empty or half-written: treated like a lock without a known holder.
  }
  return undefined;
}

function isLockHolder(value: unknown): value is LockHolder {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    Number.isInteger(record.pid) &&
    typeof record.hostname === 'string' &&
    typeof record.startedAt === 'string' &&
    (record.startTicks === undefined || Number.isSafeInteger(record.startTicks))
  );
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function ignoreCode(code: string): (error: unknown) => void {
  return (error) => {
    if (errorCode(error) !== code) throw error;
  };
}
