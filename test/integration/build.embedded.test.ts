// `npm start`: the server compiled ahead of time (scripts/build.mjs -> dist/) starts on a fresh embedded
// database, finds its contract and migrations from dist/, answers, and stops cleanly.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

describe('the compiled server (npm start)', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'lia-built-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('builds, starts from dist/ and answers /healthz and the contract', async () => {
    const build = spawn(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
    expect((await once(build, 'exit'))[0]).toBe(0);

    const server = spawn(process.execPath, ['dist/src/main.js'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: '', ADMIN_TOKEN: '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', AUDIOSOCKET_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(server, 'exit') as Promise<[number | null]>;
    let output = '';
    const url = await new Promise<string | undefined>((listening) => {
      const read = (chunk: Buffer) => {
        output += chunk;
        const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
        if (match) listening(match[1]);
      };
      server.stdout.on('data', read);
      server.stderr.on('data', read);
      void exited.then(() => listening(undefined));
    });
    expect(url, output).toBeDefined();
    try {
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
    } finally {
      server.kill('SIGTERM');
    }
    expect((await exited)[0]).toBe(0);
  });
});
