import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from '../../src/db/dataDirLock.js';

const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const lockModuleUrl = new URL('../../src/db/dataDirLock.ts', import.meta.url).href;

let dataDir: string;
let lockPath: string;
let children: ChildProcess[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'datadir-lock-'));
  lockPath = join(dataDir, 'server.lock');
});

afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children = [];
  await rm(dataDir, { recursive: true, force: true });
});

/** A separate Node process that takes the lock and keeps it until killed. */
async function spawnLockHolder(): Promise<ChildProcess> {
  const script = `
    import { lockDataDir } from ${JSON.stringify(lockModuleUrl)};
    await lockDataDir(${JSON.stringify(dataDir)});
    console.log('LOCKED');
    setInterval(() => {}, 60_000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const [output] = (await once(child.stdout!, 'data')) as [Buffer];
  expect(output.toString()).toContain('LOCKED');
  return child;
}

async function killAndWait(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

describe('lockDataDir', () => {
  it('writes who holds the lock and deletes the file on release', async () => {
    const release = await lockDataDir(dataDir);

    const holder = JSON.parse(await readFile(lockPath, 'utf8'));
    expect(holder).toEqual({ pid: process.pid, hostname: hostname(), startedAt: expect.any(String), startTicks: startTicksOf(process.pid) });
    expect(Date.parse(holder.startedAt)).not.toBeNaN();

    await release();
    expect(existsSync(lockPath)).toBe(false);
  });

  it('refuses a second lock in the same process', async () => {
    const release = await lockDataDir(dataDir);

    await expect(lockDataDir(dataDir)).rejects.toThrow(DataDirLockedError);
    await expect(lockDataDir(dataDir)).rejects.toThrow(`pid ${process.pid}`);

    await release();
    const again = await lockDataDir(dataDir);
    await again();
  });

  it('refuses while another live process holds the lock, and takes over once it has died', async () => {
    const child = await spawnLockHolder();

    const error = await lockDataDir(dataDir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect((error as Error).message).toContain(`Another server process (pid ${child.pid})`);
    expect((error as Error).message).toContain(`DATA_DIR ${dataDir}`);
    expect((error as Error).message).toMatch(/stop it or use another DATA_DIR/i);
    expect((error as DataDirLockedError).holder?.pid).toBe(child.pid);

    await killAndWait(child); // a crash: the lock file stays behind with a dead pid
    expect(JSON.parse(await readFile(lockPath, 'utf8')).pid).toBe(child.pid);

    const release = await lockDataDir(dataDir);
    expect(JSON.parse(await readFile(lockPath, 'utf8')).pid).toBe(process.pid);
    await release();
  });

  it('takes over a lock left by an earlier process that had our pid', async () => {
    const beforeWeStarted = new Date(performance.timeOrigin - 60_000).toISOString();
    await writeLock({ pid: process.pid, hostname: hostname(), startedAt: beforeWeStarted });

    const release = await lockDataDir(dataDir);

    expect(JSON.parse(await readFile(lockPath, 'utf8')).startedAt).not.toBe(beforeWeStarted);
    await release();
  });

  it('refuses a lock held from another host, whose processes it cannot see', async () => {
    await writeLock({ pid: 1, hostname: 'some-other-host', startedAt: new Date().toISOString() });

    await expect(lockDataDir(dataDir)).rejects.toThrow(/pid 1 on host some-other-host/);
  });

  it('on release, leaves alone a lock that is no longer ours', async () => {
    const release = await lockDataDir(dataDir);
    const theirs = { pid: 1, hostname: hostname(), startedAt: new Date().toISOString() };
    await writeLock(theirs);

    await release();

    expect(JSON.parse(await readFile(lockPath, 'utf8'))).toEqual(theirs);
  });

  describe('a pid that now belongs to another process', () => {
    // The test runner's parent: alive, not a server, started before this test but long after 2000.
    const unrelated = process.ppid;

    it('takes over a lock whose pid is alive but started after the lock was written (older lock format)', async () => {
      await writeLock({ pid: unrelated, hostname: hostname(), startedAt: '2000-01-01T00:00:00.000Z' });

      const release = await lockDataDir(dataDir);

      expect(JSON.parse(await readFile(lockPath, 'utf8')).pid).toBe(process.pid);
      await release();
    });

    it('takes over a lock whose pid is alive with another start time than the one recorded', async () => {
      const child = await spawnLockHolder();
      const written = JSON.parse(await readFile(lockPath, 'utf8'));
      expect(written).toMatchObject({ pid: child.pid, startTicks: startTicksOf(child.pid!) });
      // As if the holder had died and its pid gone to the live child.
      await writeLock({ ...written, startTicks: written.startTicks - 1 });

      const release = await lockDataDir(dataDir);

      expect(JSON.parse(await readFile(lockPath, 'utf8')).pid).toBe(process.pid);
      await release();
    });

    it('respects a live process whose start matches the lock, whatever the wall clock says', async () => {
      await writeLock({ pid: unrelated, hostname: hostname(), startedAt: '2000-01-01T00:00:00.000Z', startTicks: startTicksOf(unrelated) });
      await expect(lockDataDir(dataDir)).rejects.toThrow(`Another server process (pid ${unrelated})`);
    });

    it('respects an older-format lock of a live process that started before it was written', async () => {
      await writeLock({ pid: unrelated, hostname: hostname(), startedAt: new Date().toISOString() });
      await expect(lockDataDir(dataDir)).rejects.toThrow(`Another server process (pid ${unrelated})`);
    });
  });

  /** /proc/<pid>/stat field 22, read here independently of the module under test. */
  function startTicksOf(pid: number): number {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  }

  async function writeLock(holder: object): Promise<void> {
    await writeFile(lockPath, JSON.stringify(holder));
  }
});
