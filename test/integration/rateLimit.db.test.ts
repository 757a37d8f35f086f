import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`rate limit over HTTP (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  beforeAll(async () => {
    t = await startTestServer();
    orgId = await t.createOrg();
  });
  afterAll(() => t?.stop());

  const account = (key: string) => fetch(`${t.url}/v1/account`, { headers: { 'X-Api-Key': key } });

  it('allows 600 requests per key in a minute, then 429 with Retry-After; other keys are unaffected', async () => {
    const { key } = await t.createKey(orgId, 'test');
    const statuses: number[] = [];
    let last: Response | undefined;
    // Ten at a time: fast, yet every request is really counted by the server.
    for (let sent = 0; sent < 600; sent += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => account(key)));
      statuses.push(...batch.map((res) => res.status));
      last = batch[batch.length - 1];
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(600);
    expect(last!.headers.get('x-ratelimit-limit')).toBe('600');

    const refused = await account(key);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    expect((await refused.json()).detail).toMatch(/rate limit/);

    const other = await t.createKey(orgId, 'test');
    const fresh = await account(other.key);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-ratelimit-remaining')).toBe('599');
  });

  it('counts down X-RateLimit-Remaining on every authenticated answer', async () => {
    const { key } = await t.createKey(orgId, 'live');
    const first = await account(key);
    const second = await account(key);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('599');
    expect(second.headers.get('x-ratelimit-remaining')).toBe('598');
  });

  it('does not count requests that fail authentication against anyone', async () => {
    const res = await account('spk_test_unknownunknownunknownunknown00');
    expect(res.status).toBe(401);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});
