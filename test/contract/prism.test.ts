// The Prism mock of the contract, started as `npm run mock -- --port <free port>` starts it (the
// command is read from package.json): it serves the contract's examples and refuses requests the
// contract does not allow. Works offline.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { freePort } from '../support/freePort.js';

const root = path.resolve(import.meta.dirname, '../..');
const START_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 5_000;
const STOP_TIMEOUT_MS = 5_000;

/** `npm run mock -- --port <port>`'s arguments. The script names no port of its own (Prism's default
 * is 4010): a second `--port` would make Prism exit. */
function mockArgs(port: number): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const [command, ...args] = pkg.scripts.mock.trim().split(/\s+/);
  if (command !== 'prism') throw new Error(`npm run mock is not a prism command: ${pkg.scripts.mock}`);
  return [...args, '--port', String(port)];
}

function hasExited(child: ChildProcess) {
  return child.exitCode !== null || child.signalCode !== null;
}

async function stop(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

const spec = YAML.parse(readFileSync(path.join(root, 'openapi/openapi.yaml'), 'utf8'));

describe('Prism mock (npm run mock)', () => {
  let child: ChildProcess | undefined;
  let output = '';
  let baseUrl = '';
  const killOnExit = () => child?.kill('SIGKILL');

  const request = (urlPath: string, init: RequestInit = {}) =>
    fetch(baseUrl + urlPath, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    // node_modules/.bin/prism is what npm puts on PATH for the script; run it with this Node.
    child = spawn(process.execPath, [realpathSync(path.join(root, 'node_modules/.bin/prism')), ...mockArgs(port)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    process.once('exit', killOnExit);
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));

    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (hasExited(child)) throw new Error(`prism exited (${child.exitCode ?? child.signalCode}):\n${output}`);
      try {
        await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(1_000) });
        return; // any HTTP answer: it is serving
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`prism did not answer within ${START_TIMEOUT_MS} ms:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    if (child) await stop(child);
    process.removeListener('exit', killOnExit);
  }, STOP_TIMEOUT_MS + 5_000);

  it("answers GET /v1/account with the contract's example", async () => {
    const response = await request('/v1/account', { headers: { Authorization: 'Bearer spk_test_anything' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await response.json();
    expect(body.org_id).toBe('org_3kTMd9Qx7LpA2vWz');
    expect(body).toEqual(spec.paths['/v1/account'].get.responses['200'].content['application/json'].example);
  });

  it('refuses a request without credentials', async () => {
    const response = await request('/v1/account');
    expect(response.status).toBe(401);
  });

  it('refuses an invalid body with 422 and names the violations', async () => {
    const response = await request('/v1/translate', {
      method: 'POST',
      headers: { Authorization: 'Bearer spk_test_anything', 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(422);
    const violations = JSON.parse(response.headers.get('sl-violations') ?? '[]') as Array<{ message: string }>;
    expect(violations.map((v) => v.message).join('\n')).toMatch(/required property 'target'/);
    expect(violations.map((v) => v.message).join('\n')).toMatch(/required property 'text'/);
  });
});
