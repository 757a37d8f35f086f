import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`the request log (${backendName})`, () => {
  const lines: Array<Record<string, unknown>> = [];
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({}, { logLevel: 'info', logDestination: { write: (line: string) => lines.push(JSON.parse(line)) } });
  });
  afterAll(() => t?.stop());

  const linesOf = (requestId: string) => lines.filter((line) => line.requestId === requestId);

  it('writes one line per request with its request id, method, redacted URL and status, and no credential', async () => {
    const orgId = await t.createOrg();
    const { key } = await t.createKey(orgId, 'test');
    const res = await fetch(`${t.url}/v1/account?api_key=${key}`, { headers: { Authorization: `Bearer ${key}`, 'X-Request-Id': 'req-one' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req-one');
    await res.arrayBuffer();
    const unknown = await fetch(`${t.url}/v1/nowhere`);
    expect(unknown.status).toBe(404);
    const generated = unknown.headers.get('x-request-id')!;
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);

    // The server logs when the response is done, which the client may see first: the next request's line follows.
    await fetch(`${t.url}/healthz`);
    const [line] = linesOf('req-one');
    expect(linesOf('req-one')).toHaveLength(1);
    expect(line).toMatchObject({ msg: 'request completed', req: { method: 'GET', url: '/v1/account?api_key=[redacted]' }, res: { statusCode: 200 } });
    expect(typeof line!.responseTime).toBe('number');
    expect(JSON.stringify(lines)).not.toContain(key);
    expect(linesOf(generated)).toEqual([expect.objectContaining({ res: { statusCode: 404 } })]);
  });
});
