// How many statements a request sends to the database (round trips), pinned so they do not creep back:
// counted on a warm server (the key already known to the credential cache), not timed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOwned } from '../../src/auth/owned.js';
import { findOrganization } from '../../src/db/organizations.js';
import { backendName } from '../support/databases.js';
import { countQueries, type QueryCounter } from '../support/queryCounter.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`round trips per request (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let queries: QueryCounter;
  let sessionId: string;
  let callId: string;
  let orgId: string;

  const headers = () => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });
  const request = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<any> => {
    const res = await fetch(`${t.url}${path}`, { method, headers: { ...headers(), ...extra }, body: body === undefined ? undefined : JSON.stringify(body) });
    expect(res.status).toBeLessThan(300);
    return res.json();
  };
  beforeAll(async () => {
    // Nothing on a timer during the test (instance heartbeat, webhook poll, credential cache expiry):
    // its statements would be counted with the requests', on a slow machine at any moment.
    t = await startTestServer({ INSTANCE_HEARTBEAT_MS: '600000', WEBHOOK_POLL_INTERVAL_MS: '600000', CREDENTIAL_CACHE_TTL_MS: '600000' });
    orgId = await t.createOrg();
    key = (await t.createKey(orgId, 'test')).key;
    queries = countQueries(t.server.app.db);
    sessionId = (await request('POST', '/v1/sessions', { agent_language: 'en', customer_language: 'de' })).id;
    callId = (await request('POST', '/v1/calls', { agent_language: 'en', customer_language: 'de' })).id;
    await request('GET', '/v1/account'); // the key is now known
  });
  afterAll(() => t?.stop());

  it.each([
    ['GET /v1/account', 'GET', (): string => '/v1/account', undefined, undefined, 1],
    ['GET /v1/calls/{id}', 'GET', (): string => `/v1/calls/${callId}`, undefined, undefined, 1],
    ['GET /v1/sessions/{id}/messages', 'GET', (): string => `/v1/sessions/${sessionId}/messages?after=0&limit=20`, undefined, undefined, 1],
    ['POST /v1/translate', 'POST', (): string => '/v1/translate', { text: 'Hello world', target: 'de', source: 'en' }, undefined, 0],
    ['POST /v1/translate with Idempotency-Key', 'POST', (): string => '/v1/translate', { text: 'Hello again', target: 'de', source: 'en' }, 'translate-1', 2],
    ['POST /v1/sessions/{id}/messages', 'POST', (): string => `/v1/sessions/${sessionId}/messages`, { sender: 'agent', text: 'Hello there' }, undefined, 2],
  ] as const)('%s', async (_name, method, path, body, idempotencyKey, expected) => {
    const extra = idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : undefined;
    const sent = await queries.during(() => request(method, path(), body, extra));
    expect(sent).toHaveLength(expected); // a failure shows the statements
  });

  it('shares the read of one object among the requests that ask while one is in flight', async () => {
    const payer = { orgId, mode: 'test' as const };
    const db = t.server.app.db;
    const reads = await queries.during(() => Promise.all(Array.from({ length: 8 }, () => findOwned<{ id: string }>(db, 'calls', payer, callId, 'call'))));
    // The first goes at once; the seven asked meanwhile share the next read, each with its own copy.
    expect(reads).toHaveLength(2);
    const calls = await Promise.all(Array.from({ length: 3 }, () => findOwned<{ id: string }>(db, 'calls', payer, callId, 'call')));
    expect(calls.map((call) => call.id)).toEqual([callId, callId, callId]);
    expect(calls[1]).not.toBe(calls[2]);
    // Another organization's request never shares it: not found.
    await expect(findOwned(db, 'calls', { orgId: 'org_other', mode: 'test' }, callId, 'call')).rejects.toMatchObject({ status: 404 });
  });

  it('shares the read of an organization the same way (GET /v1/account under load)', async () => {
    const db = t.server.app.db;
    const reads = await queries.during(() => Promise.all(Array.from({ length: 8 }, () => findOrganization(db, orgId))));
    expect(reads).toHaveLength(2);
    const orgs = await Promise.all(Array.from({ length: 3 }, () => findOrganization(db, orgId)));
    expect(orgs.map((org) => org?.id)).toEqual([orgId, orgId, orgId]);
    expect(orgs[1]).not.toBe(orgs[2]);
    expect(await findOrganization(db, 'org_missing')).toBeUndefined();
    // Inside a transaction a read is the transaction's own.
    const inTransaction = await queries.during(() => db.transaction((trx) => Promise.all([findOrganization(trx, orgId), findOrganization(trx, orgId)])));
    expect(inTransaction.filter((query) => /organizations/.test(query))).toHaveLength(2);
  });
});
