// The real start command in a child process, as `npm start` runs it (the build into dist/, then
// `node dist/src/main.js`): it finds its contract, migrations and pages in dist/; first-start banner, the
// DATA_DIR lock, SIGTERM, a restart on the same data, and an exit when the embedded database's worker dies.
// One data directory for all of it: a fresh one costs an initdb and the migrations (about 15 s of CPU).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
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

/** `npm start` without npm; `preload` modules (`node --import`) go before the server's. */
function start(env: Record<string, string>, preload: string[] = []): Started {
  const child = spawn(process.execPath, [...preload.flatMap((module) => ['--import', module]), 'dist/src/main.js'], {
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
    // npm's prestart.
    const build = spawn(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
    expect((await once(build, 'exit'))[0]).toBe(0);
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('prints a demo organization and test key that work, serves from dist/, refuses a second process, and stops cleanly on SIGTERM', async () => {
    const first = start({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', AUDIOSOCKET_PORT: '0' });
    const [, url] = await waitFor(first, /"url":"(http:\/\/[^"]+)"/);
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const contract = await fetch(`${url}/openapi.json`);
    expect(contract.status).toBe(200);
    expect(await contract.json()).toMatchObject({ openapi: expect.stringMatching(/^3\./), paths: expect.any(Object) });
    // The pages' own files come from dist/ too.
    for (const asset of ['/call/call_x', '/call-assets/call.js', '/page-i18n/catalogue.js', '/page-shared/api.js', '/chat/sess_x', '/chat-assets/stream.js']) {
      const page = await fetch(`${url}${asset}`);
      expect(page.status, asset).toBe(200);
      await page.arrayBuffer();
    }
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

  // On the data directory the test above left (existing: no initdb).
  it('logs why and exits 1 when the embedded database worker dies', async () => {
    // test/fixtures/endDatabaseWorkerOnSignal.mjs ends the database's worker thread on SIGUSR2, as a crash inside PGlite would.
    const server = start({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', AUDIOSOCKET_PORT: '0' }, ['./test/fixtures/endDatabaseWorkerOnSignal.mjs']);
    await waitFor(server, /server listening/);
    server.child.kill('SIGUSR2');
    await waitFor(server, /the embedded database stopped \(its worker thread ended\); exiting/);
    await waitFor(server, /worker thread stopped \(exit code 1\)/);
    expect(await server.exited).toBe(1);
  });

  it('refuses to start with a clear message when the configuration is wrong', async () => {
    const bad = start({ DATA_DIR: dataDir, PORT: 'eighty', PUBLIC_BASE_URL: 'not a url' });
    expect(await bad.exited).toBe(1);
    expect(bad.output()).toMatch(/PORT must be a whole number/);
    expect(bad.output()).toMatch(/PUBLIC_BASE_URL must be a http: or https: URL/);
  });
});
