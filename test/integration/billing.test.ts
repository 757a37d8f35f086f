import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiPrincipal } from '../../src/auth/principal.js';
import { chargeUsage } from '../../src/services/billing.js';
import { requestRefFor, runIdempotently } from '../../src/services/idempotency.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`ledger and idempotency records (${backendName})`, () => {
  let t: TestServer;
  let principal: ApiPrincipal;
  const credential = 'spk_live_credential_of_the_caller';
  beforeAll(async () => {
    t = await startTestServer();
    const orgId = await t.createOrg({ balance: 2 });
    principal = { kind: 'apiKey', keyId: 'key_x', orgId, mode: 'live', scopes: [], rateLimitKey: 'key:key_x' };
  });
  afterAll(() => t?.stop());

  it('charges a request once even when it runs again after a crash', async () => {
    const usage = { kind: 'text' as const, quantity: 10, costMicros: 200, reference: null, requestRef: requestRefFor('key:key_x', 'crash') };
    const first = await chargeUsage(t.server.app.db, principal, usage);
    const again = await chargeUsage(t.server.app.db, principal, { ...usage, quantity: 0 + 4, costMicros: 80 });
    expect(first).toEqual({ quantity: 10, costMicros: 200 });
    expect(again).toEqual(first);
    const org = await t.server.app.db('organizations').where({ id: principal.orgId }).first();
    expect(org.balance_micros).toBe(2_000_000 - 200);
  });

  it('lets a retry take over a request that died while running', async () => {
    const db = t.server.app.db;
    await db('idempotency_keys').insert({
      principal_key: 'key:key_x',
      idempotency_key: 'dead',
      request_hash: 'h',
      state: 'running',
      created_at: new Date(Date.now() - 10 * 60 * 1000),
    });
    const answer = await runIdempotently(db, 'key:key_x', 'dead', 'h', credential, async () => ({ status: 200, body: { ok: true } }));
    expect(answer).toEqual({ status: 200, body: { ok: true }, replayed: false });
    const replay = await runIdempotently(db, 'key:key_x', 'dead', 'h', credential, async () => ({ status: 200, body: { ok: false } }));
    expect(replay).toEqual({ status: 200, body: { ok: true }, replayed: true });
  });

  it('refuses a second request while the first is still running', async () => {
    const db = t.server.app.db;
    let release!: () => void;
    const first = runIdempotently(db, 'key:key_x', 'slow', 'h', credential, () =>
      new Promise((resolve) => (release = () => resolve({ status: 201, body: { id: 1 } }))),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(runIdempotently(db, 'key:key_x', 'slow', 'h', credential, async () => ({ status: 201 }))).rejects.toMatchObject({ status: 409 });
    release();
    expect(await first).toMatchObject({ status: 201, replayed: false });
  });

  it("keeps stored answers sealed with the caller's credential: the database never holds them readable", async () => {
    const db = t.server.app.db;
    const secretBody = { url: 'https://example.test/call/call_1#k=ck_secret_shown_once' };
    await runIdempotently(db, 'key:key_x', 'sealed', 'h', credential, async () => ({ status: 201, body: secretBody }));
    const row = await db('idempotency_keys').where({ principal_key: 'key:key_x', idempotency_key: 'sealed' }).first();
    expect(row.response_body).not.toContain('ck_secret');
    expect(Buffer.from(row.response_body, 'base64').toString('latin1')).not.toContain('ck_secret');
    const replay = await runIdempotently(db, 'key:key_x', 'sealed', 'h', credential, async () => ({ status: 500 }));
    expect(replay).toEqual({ status: 201, body: secretBody, replayed: true });
    await expect(runIdempotently(db, 'key:key_x', 'sealed', 'h', 'another', async () => ({ status: 500 }))).rejects.toMatchObject({ status: 422 });
  });
});
