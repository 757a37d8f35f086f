// The real start command in a child process: first-start banner, the DATA_DIR lock, SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: '', ADMIN_TOKEN: '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Resolves when the output matches `pattern` (waiting on the child's output, not on a clock); rejects if it exits first. */
function waitFor(started: Started, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = started.output().match(pattern);
      if (!match) return;
      stop();
      resolve(match);
    };
    const exited = () => {
      stop();
      const match = started.output().match(pattern);
      if (match) return resolve(match);
      reject(new Error(`exited before ${pattern}; output:\n${started.output()}`));
    };
    const stop = () => {
      started.child.stdout!.off('data', check);
      started.child.stderr!.off('data', check);
      started.child.off('close', exited);
    };
    // Registered after start()'s own listeners, so the output already holds each chunk when checked.
    started.child.stdout!.on('data', check);
    started.child.stderr!.on('data', check);
    // 'close', not 'exit': by then every byte the child wrote has been read.
    started.child.once('close', exited);
    check();
  });
}

describe('npm start on an embedded database', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'lia-life-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('prints a demo organization and test key that work, refuses a second process, and stops cleanly on SIGTERM', async () => {
    const first = start({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    const [, url] = await waitFor(first, /"url":"(http:\/\/[^"]+)"/);
    const [, testKey] = await waitFor(first, /Demo test key:\s+(spk_test_\S+)/);
    const [, adminToken] = await waitFor(first, /Admin token:\s+(\S+)/);

    const account = await fetch(`${url}/v1/account`, { headers: { Authorization: `Bearer ${testKey}` } });
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ org_name: 'Demo Organization', mode: 'test' });
    const admin = await fetch(`${url}/admin/orgs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Second' }),
    });
    expect(admin.status).toBe(201);

    const second = start({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    expect(await second.exited).toBe(1);
    expect(second.output()).toMatch(/Another server process \(pid \d+\) is using DATA_DIR/);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    // A restart finds the same data and the same credentials.
    const again = start({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    const [, url2] = await waitFor(again, /"url":"(http:\/\/[^"]+)"/);
    await waitFor(again, new RegExp(`Demo test key:\\s+${testKey}`));
    const stored = JSON.parse(await readFile(path.join(dataDir, 'bootstrap.json'), 'utf8'));
    expect(stored.demo.test_key).toBe(testKey);
    expect((await fetch(`${url2}/v1/account`, { headers: { 'X-Api-Key': testKey } })).status).toBe(200);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    // How long a stuck start is waited for, never a measure of speed: the build, a fresh PGlite and two
    // processes took over 90 s on a 2-core machine at load average 24.
  }, 600_000);

  it('refuses to start with a clear message when the configuration is wrong', async () => {
    const bad = start({ DATA_DIR: dataDir, PORT: 'eighty', PUBLIC_BASE_URL: 'not a url' });
    expect(await bad.exited).toBe(1);
    expect(bad.output()).toMatch(/PORT must be a whole number/);
    expect(bad.output()).toMatch(/PUBLIC_BASE_URL must be a http: or https: URL/);
  });
});
