import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { countQueries } from '../support/queryCounter.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const account = (t: TestServer, key: string) => fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } });
const keyLookups = (sql: string[]) => sql.filter((statement) => /from "api_keys"/.test(statement)).length;
// Entries do not expire during a test however slow the machine: only revocation may take a key out.
const LONG_LIVED = { CREDENTIAL_CACHE_TTL_MS: '600000' };

describe(`the credential cache (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;

  beforeAll(async () => {
    t = await startTestServer(LONG_LIVED);
    orgId = await t.createOrg();
  });
  afterAll(() => t?.stop());

  it('looks a key up once, then answers from memory', async () => {
    const { key } = await t.createKey(orgId, 'test');
    const queries = countQueries(t.server.app.db);
    const first = await queries.during(async () => expect((await account(t, key)).status).toBe(200));
    expect(keyLookups(first)).toBe(1);
    const second = await queries.during(async () => expect((await account(t, key)).status).toBe(200));
    expect(keyLookups(second)).toBe(0);
  });

  it('forgets a revoked key before the next request', async () => {
    const { id, key } = await t.createKey(orgId, 'test');
    expect((await account(t, key)).status).toBe(200);
    expect((await account(t, key)).status).toBe(200); // answered from memory
    const revoke = await t.admin.DELETE('/admin/keys/{key_id}', { params: { path: { key_id: id } } });
    expect(revoke.response.status).toBe(204);
    expect((await account(t, key)).status).toBe(401);
  });

  it('never keeps an unknown key: it is looked up every time', async () => {
    const unknown = `spk_test_${'A'.repeat(40)}`;
    const queries = countQueries(t.server.app.db);
    for (let i = 0; i < 2; i++) {
      const sent = await queries.during(async () => expect((await account(t, unknown)).status).toBe(401));
      expect(keyLookups(sent)).toBe(1);
    }
  });
});

describe.skipIf(backendName !== 'postgres')('the credential cache with two instances on one PostgreSQL database', () => {
  let first: TestServer;
  let second: TestServer;

  beforeAll(async () => {
    first = await startTestServer(LONG_LIVED);
    const shared = first.server.app.config.databaseUrl!;
    second = await startTestServer(LONG_LIVED, { databaseUrl: () => shared });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('a key revoked through one instance is refused by the other on its very next request', async () => {
    const orgId = await first.createOrg();
    const { id, key } = await first.createKey(orgId, 'live');
    // The other instance has the key in memory.
    expect((await account(second, key)).status).toBe(200);
    const queries = countQueries(second.server.app.db);
    expect(keyLookups(await queries.during(async () => expect((await account(second, key)).status).toBe(200)))).toBe(0);

    const heard = new Promise<void>((resolve) => second.server.app.revocations.watch(id, resolve));
    const revoke = await first.admin.DELETE('/admin/keys/{key_id}', { params: { path: { key_id: id } } });
    expect(revoke.response.status).toBe(204);
    await heard; // the notification reached the other instance
    expect((await account(second, key)).status).toBe(401);
    expect((await account(first, key)).status).toBe(401);
  });

  it('ends the other instance\'s event streams opened with a revoked key', async () => {
    const orgId = await first.createOrg();
    const { id, key } = await first.createKey(orgId, 'test');
    const stream = await fetch(`${second.url}/v1/events`, { headers: { Authorization: `Bearer ${key}` } });
    expect(stream.status).toBe(200);
    const revoke = await first.admin.DELETE('/admin/keys/{key_id}', { params: { path: { key_id: id } } });
    expect(revoke.response.status).toBe(204);
    // The stream ends (the body reaches its end) because the revocation was heard over there.
    const body = await stream.text();
    expect(typeof body).toBe('string');
  });
});
