// The Prism mock of the contract, started as `npm run mock -- --port <free port>` starts it (the
// command is read from package.json): it serves the contract's examples and refuses requests the
// contract does not allow. Works offline.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { contractAjv } from '../../codegen/examples.js';
import { resolved } from '../../src/http/refs.js';
import { freePort } from '../support/freePort.js';

const root = path.resolve(import.meta.dirname, '../..');

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

/** The mock keeps nothing worth a graceful stop. */
async function stop(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}

const spec = YAML.parse(readFileSync(path.join(root, 'openapi/openapi.yaml'), 'utf8'));

describe('Prism mock (npm run mock)', () => {
  let child: ChildProcess | undefined;
  let output = '';
  let baseUrl = '';
  const killOnExit = () => child?.kill('SIGKILL');

  const request = (urlPath: string, init: RequestInit = {}) =>
    fetch(baseUrl + urlPath, init);

  // One mock for every test of this file (Prism takes seconds to start).
  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    // node_modules/.bin/prism is what npm puts on PATH for the script; run it with this Node.
    child = spawn(process.execPath, [realpathSync(path.join(root, 'node_modules/.bin/prism')), ...mockArgs(port)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    process.once('exit', killOnExit);
    // Serving once it says so (its info line); an exit before that fails at once.
    const started = child;
    await new Promise<void>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk;
        if (/Prism is listening/.test(output)) resolve();
      };
      started.stdout!.on('data', read);
      started.stderr!.on('data', read);
      started.once('exit', (code, signal) => reject(new Error(`prism exited (${code ?? signal}):\n${output}`)));
    });
  });

  afterAll(async () => {
    if (child) await stop(child);
    process.removeListener('exit', killOnExit);
  });

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

  // Every operation of the contract, every status it documents, asked of the mock (`Prefer: code=`), in
  // parallel: the mock must answer that status with a body the contract allows for it.
  it('answers each documented status of each operation with a body valid against the contract', async () => {
    const ajv = contractAjv(spec);
    const cases = Object.entries<Record<string, any>>(spec.paths).flatMap(([apiPath, item]) =>
      (['get', 'put', 'post', 'delete', 'patch'] as const)
        .filter((method) => item[method])
        .flatMap((method) => Object.keys(item[method].responses).map((status) => ({ apiPath, method, status }))),
    );
    expect(cases.length).toBeGreaterThan(200);

    const failures: string[] = [];
    const queue = [...cases];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const problem = await checkCase(ajv, next.apiPath, next.method, next.status).catch((err: Error) => err.message);
        if (problem) failures.push(`${next.method.toUpperCase()} ${next.apiPath} ${next.status}: ${problem}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    expect(failures).toEqual([]);
  });

  /** A request the operation accepts, built from the contract's own examples. */
  function requestFor(apiPath: string, method: string): { url: string; init: RequestInit } {
    const op = spec.paths[apiPath][method];
    const parameters = [...(spec.paths[apiPath].parameters ?? []), ...(op.parameters ?? [])].map((p: any) => resolved(spec, p));
    const headers: Record<string, string> = {};
    let url = apiPath;
    const query = new URLSearchParams();
    for (const parameter of parameters) {
      const value = parameter.example ?? parameter.schema?.example;
      if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
      else if (value !== undefined && parameter.in === 'query') query.set(parameter.name, String(value));
      else if (value !== undefined && parameter.in === 'header') headers[parameter.name] = String(value);
    }
    const schemes = (op.security ?? spec.security).flatMap((requirement: object) => Object.keys(requirement));
    if (schemes.includes('CallKey')) headers['X-Call-Key'] = 'ck_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2c';
    else if (schemes.includes('ChatKey')) headers['X-Chat-Key'] = 'chk_7Yh2Jk5Lm8Np3Qr6St9Vw2Xy5Za8Bc1De';
    else if (schemes.includes('OAuthClientBasic')) headers.Authorization = `Basic ${Buffer.from('app_4hT8kW2mQ9xL7pZ3:sec_example').toString('base64')}`;
    else if (schemes.length) headers.Authorization = 'Bearer spk_test_anything';

    let body: BodyInit | undefined;
    const content = resolved(spec, op.requestBody)?.content ?? {};
    if (content['application/json']) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(content['application/json'].example ?? {});
    } else if (content['application/x-www-form-urlencoded']) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(content['application/x-www-form-urlencoded'].example).toString();
    } else if (content['multipart/form-data']) {
      const form = new FormData();
      const schema = resolved(spec, content['multipart/form-data'].schema);
      for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
        if (resolved(spec, property).format === 'binary') form.set(name, new Blob([Buffer.alloc(64)], { type: 'audio/webm' }), 'voice.webm');
        else if (schema.required?.includes(name)) form.set(name, String(content['multipart/form-data'].example?.[name] ?? 'customer'));
      }
      body = form;
    }
    return { url: `${baseUrl}${url}${query.size ? `?${query}` : ''}`, init: { method: method.toUpperCase(), headers, body, redirect: 'manual' } };
  }

  /** Null when the mock answered `status` with what the contract documents for it; else what is wrong. */
  async function checkCase(ajv: ReturnType<typeof contractAjv>, apiPath: string, method: string, status: string): Promise<string | null> {
    const { url, init } = requestFor(apiPath, method);
    const response = await fetch(url, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), Prefer: `code=${status}` },
    });
    const text = await response.text();
    if (String(response.status) !== status) return `answered ${response.status}: ${text.slice(0, 300)}`;
    const responseRef: string =
      spec.paths[apiPath][method].responses[status].$ref ??
      `#/paths/${apiPath.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}`;
    const documented = resolved(spec, spec.paths[apiPath][method].responses[status]);
    const types = Object.keys(documented.content ?? {});
    if (!types.length) return text === '' ? null : `a body where none is documented: ${text.slice(0, 100)}`;
    const contentType = (response.headers.get('content-type') ?? '').split(';')[0].trim();
    const type = types.find((t) => t === contentType || (t.endsWith('/*') && contentType.startsWith(t.slice(0, -1))));
    if (!type) return `content type ${contentType} is not one of ${types.join(', ')}`;
    if (type !== 'application/json') return text.length ? null : 'an empty body';
    const validate = ajv.getSchema(`contract${responseRef}/content/application~1json/schema`);
    if (!validate) return `no schema at ${responseRef}`;
    if (validate(JSON.parse(text))) return null;
    return `body ${text.slice(0, 200)} refused: ${ajv.errorsText(validate.errors)}`;
  }
});
