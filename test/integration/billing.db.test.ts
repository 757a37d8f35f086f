// The money module and the idempotency records, driven directly: reservations against the real
// database (PGlite, or PostgreSQL with TEST_DATABASE_URL), dead instances, and key claims.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Payer } from '../../src/auth/principal.js';
import { reapDeadInstances } from '../../src/deployment/instances.js';
import { chargeCallSeconds, observeLedger, release, reserve, settle, type Reservation } from '../../src/money/index.js';
import type { LedgerEntry } from '../../src/money/ledger.js';
import { requestRefFor, runIdempotently, type IdempotentRequest } from '../../src/idempotency/idempotency.js';
import type { OrganizationRow } from '../../src/organizations/organizations.js';
import { organizationTerms } from '../../src/db/organizations.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`reservations and the ledger (${backendName})`, () => {
  let t: TestServer;
  const db = () => t.server.app.db;
  const instanceId = () => t.server.app.instanceId;
  const orgRow = async (id: string) => (await db()<OrganizationRow>('organizations').where({ id }).first())!;
  const ledgerSum = async (id: string) =>
    (await db()('ledger_entries').where({ org_id: id, mode: 'live' })).reduce((sum, row) => sum + row.amount_micros, 0);
  const holds = (id: string) => db()('balance_holds').where({ org_id: id });
  const settleNow = (reservation: Reservation, requestRef: string | null = null) =>
    db().transaction((trx) => settle(trx, reservation, { reference: 'test', requestRef, appId: null }));

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  /** A prepaid organization whose text rate makes one character cost 20 micro-units. */
  const prepaid = async (balance: number | null) => {
    const id = await t.createOrg({ balance, text_rate_per_million_characters: 20, voice_rate_per_minute: 0.6 });
    return { id, payer: { orgId: id, mode: 'live' } as Payer };
  };

  it('holds the cost without changing the balance, refuses what the available balance cannot cover, then settles or releases', async () => {
    const { id, payer } = await prepaid(0.001); // 1,000 micro-units
    const first = await reserve(db(), instanceId(), payer, await organizationTerms(db(), id), 'text', 30); // 600
    expect(first).toMatchObject({ quantity: 30, costMicros: 600, prepaid: true });
    expect(first.holdId).not.toBeNull();
    expect(await orgRow(id)).toMatchObject({ balance_micros: 1_000, held_micros: 600 });

    await expect(reserve(db(), instanceId(), payer, await organizationTerms(db(), id), 'text', 30)).rejects.toMatchObject({
      status: 402,
      detail: expect.stringMatching(/costs 0\.000600 EUR .* 0\.000400 EUR available/),
    });
    const second = await reserve(db(), instanceId(), payer, await organizationTerms(db(), id), 'text', 20); // exactly the 400 left
    expect(await orgRow(id)).toMatchObject({ balance_micros: 1_000, held_micros: 1_000 });
    await release(db(), [second]);
    expect(await orgRow(id)).toMatchObject({ balance_micros: 1_000, held_micros: 600 });

    expect(await settleNow(first)).toEqual({ quantity: 30, costMicros: 600 });
    expect(await orgRow(id)).toMatchObject({ balance_micros: 400, held_micros: 0 });
    expect(await holds(id)).toHaveLength(0);
    expect(await ledgerSum(id)).toBe(400);
    // Releasing a settled reservation changes nothing.
    await release(db(), [first]);
    expect(await orgRow(id)).toMatchObject({ balance_micros: 400, held_micros: 0 });
  });

  it('charges a request once even when it runs again after a crash', async () => {
    const { id, payer } = await prepaid(2);
    const requestRef = requestRefFor('key:key_x', 'crash');
    const first = await reserve(db(), instanceId(), payer, await organizationTerms(db(), id), 'text', 10);
    expect(await settleNow(first, requestRef)).toEqual({ quantity: 10, costMicros: 200 });
    // The retry finds what it must translate in the cache: nothing to hold, and the charge it already has.
    const retry = await reserve(db(), instanceId(), payer, await organizationTerms(db(), id), 'text', 0);
    expect(await settleNow(retry, requestRef)).toEqual({ quantity: 10, costMicros: 200 });
    // Even a retry that holds something again is not charged twice, and its hold is freed.
    const again = await reserve(db(), instanceId(), payer, await organizationTerms(db(), id), 'text', 4);
    expect(await settleNow(again, requestRef)).toEqual({ quantity: 10, costMicros: 200 });
    expect(await orgRow(id)).toMatchObject({ balance_micros: 2_000_000 - 200, held_micros: 0 });
    expect(await db()('ledger_entries').where({ request_ref: requestRef })).toHaveLength(1);
  });

  it('settles a reservation whose hold was lost only while the available balance still covers it', async () => {
    const { id, payer } = await prepaid(0.001);
    const lost = await reserve(db(), instanceId(), payer, await organizationTerms(db(), id), 'text', 30); // 600
    await release(db(), [lost]);
    const other = await reserve(db(), instanceId(), payer, await organizationTerms(db(), id), 'text', 25); // 500 held, 500 available
    await expect(settleNow(lost)).rejects.toMatchObject({ status: 402 });
    expect(await orgRow(id)).toMatchObject({ balance_micros: 1_000, held_micros: 500 });
    expect(await db()('ledger_entries').where({ org_id: id, kind: 'text' })).toHaveLength(0);

    await release(db(), [other]);
    expect(await settleNow(lost)).toEqual({ quantity: 30, costMicros: 600 });
    expect(await orgRow(id)).toMatchObject({ balance_micros: 400, held_micros: 0 });
  });

  it('never holds, and never refuses, for test mode or an invoiced organization', async () => {
    const { id } = await prepaid(0);
    const test = await reserve(db(), instanceId(), { orgId: id, mode: 'test' }, await organizationTerms(db(), id), 'text', 1_000);
    expect(test).toMatchObject({ quantity: 0, costMicros: 0, holdId: null });
    expect(await settleNow(test)).toEqual({ quantity: 0, costMicros: 0 });

    const invoiced = await prepaid(null);
    const live = await reserve(db(), instanceId(), invoiced.payer, await organizationTerms(db(), invoiced.id), 'voice_message', 90);
    expect(live).toMatchObject({ quantity: 90, costMicros: 900_000, holdId: null, prepaid: false });
    expect(await settleNow(live)).toEqual({ quantity: 90, costMicros: 900_000 });
    expect(await orgRow(invoiced.id)).toMatchObject({ balance_micros: null, held_micros: 0 });
    expect((await db()('ledger_entries').where({ org_id: invoiced.id })).map((row) => row.amount_micros)).toEqual([-900_000]);
  });

  it("charges a live call's seconds in one statement: the ledger row, the balance, the observer told; an invoiced balance is left alone", async () => {
    const observed: LedgerEntry[] = [];
    const serversOwn = db().userParams;
    observeLedger(db(), (entry) => observed.push(entry));
    const funded = await prepaid(0.001); // 1,000 micro-units
    const invoiced = await prepaid(null);
    try {
      // 0.6 per minute is 10,000 micro-units a second: the balance pays for none after 1 s.
      expect(await chargeCallSeconds(db(), funded.payer, 'call_a', 1)).toEqual({ runOut: true });
      expect((await orgRow(funded.id)).balance_micros).toBe(1_000 - 10_000);
      expect(await ledgerSum(funded.id)).toBe(1_000 - 10_000);
      expect(await chargeCallSeconds(db(), invoiced.payer, 'call_b', 3)).toEqual({ runOut: false, fundedMs: null });
      expect((await orgRow(invoiced.id)).balance_micros).toBeNull();
      const rows = await db()('ledger_entries').whereIn('org_id', [funded.id, invoiced.id]).andWhere({ kind: 'call' }).orderBy('id');
      expect(rows.map((row) => [row.reference, row.quantity, row.amount_micros])).toEqual([
        ['call_a', 1, -10_000],
        ['call_b', 3, -30_000],
      ]);
      const charges = observed.filter((entry) => entry.kind === 'call');
      expect(charges.map(({ id, reference, kind, mode, created_at }) => ({ id, reference, kind, mode, created_at }))).toEqual(
        rows.map(({ id, reference, kind, mode, created_at }) => ({ id, reference, kind, mode, created_at })),
      );
    } finally {
      db().userParams = serversOwn;
    }
  });

  it('releases the holds of instances that died, and keeps those of live ones', async () => {
    const { id, payer } = await prepaid(1);
    await db()('instances').insert([
      { id: 'inst_expired', host: 'h', pid: 1, expires_at: new Date(Date.now() - 60_000) },
      { id: 'inst_other_live', host: 'h', pid: 2, expires_at: new Date(Date.now() + 600_000) },
    ]);
    const org = await organizationTerms(db(), id);
    await reserve(db(), 'inst_expired', payer, org, 'text', 100);
    await reserve(db(), 'inst_never_registered', payer, org, 'text', 100);
    const kept = await reserve(db(), 'inst_other_live', payer, org, 'text', 100);
    const mine = await reserve(db(), instanceId(), payer, org, 'text', 100);
    expect((await orgRow(id)).held_micros).toBe(8_000);

    await reapDeadInstances(db(), undefined, pino({ level: 'silent' }));
    expect((await holds(id)).map((row) => row.id).sort()).toEqual([kept.holdId, mine.holdId].sort());
    expect((await orgRow(id)).held_micros).toBe(4_000);
    expect(await db()('instances').where({ id: 'inst_expired' })).toHaveLength(0);

    // A single-process database: every other instance is dead, whatever its lease says.
    await reapDeadInstances(db(), instanceId(), pino({ level: 'silent' }));
    expect((await holds(id)).map((row) => row.id)).toEqual([mine.holdId]);
    expect(await orgRow(id)).toMatchObject({ balance_micros: 1_000_000, held_micros: 2_000 });
    await release(db(), [mine]);
  });
});

describe(`idempotency records (${backendName})`, () => {
  let t: TestServer;
  const credential = 'spk_live_credential_of_the_caller';
  const request = (idempotencyKey: string, overrides: Partial<IdempotentRequest> = {}): IdempotentRequest => ({
    principalKey: 'key:key_x',
    idempotencyKey,
    fingerprint: 'h',
    credential,
    instanceId: t.server.app.instanceId,
    ...overrides,
  });
  const running = (idempotencyKey: string, instanceId: string) =>
    t.server.app.db('idempotency_keys').insert({
      principal_key: 'key:key_x',
      idempotency_key: idempotencyKey,
      request_hash: 'h',
      state: 'running',
      instance_id: instanceId,
    });

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it('lets a retry take over a request whose instance died, at once', async () => {
    const db = t.server.app.db;
    await running('dead', 'inst_killed');
    const answer = await runIdempotently(db, request('dead'), async () => ({ status: 200, body: { ok: true } }));
    expect(answer).toEqual({ status: 200, body: { ok: true }, replayed: false });
    const replay = await runIdempotently(db, request('dead'), async () => ({ status: 200, body: { ok: false } }));
    expect(replay).toEqual({ status: 200, body: { ok: true }, replayed: true });
  });

  it('refuses to take over a dead request with another body (422)', async () => {
    await running('dead-other', 'inst_killed');
    await expect(
      runIdempotently(t.server.app.db, request('dead-other', { fingerprint: 'other' }), async () => ({ status: 200 })),
    ).rejects.toMatchObject({ status: 422 });
  });

  it('answers 409 while the request runs in a live instance', async () => {
    await running('alive', t.server.app.instanceId);
    await expect(runIdempotently(t.server.app.db, request('alive'), async () => ({ status: 200 }))).rejects.toMatchObject({
      status: 409,
    });
  });

  it('refuses a second request while the first is still running', async () => {
    const db = t.server.app.db;
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = runIdempotently(db, request('slow'), () => {
      started();
      return new Promise((resolve) => (release = () => resolve({ status: 201, body: { id: 1 } })));
    });
    await running;
    await expect(runIdempotently(db, request('slow'), async () => ({ status: 201 }))).rejects.toMatchObject({ status: 409 });
    release();
    expect(await first).toMatchObject({ status: 201, replayed: false });
  });

  it("keeps stored answers sealed with the caller's credential: the database never holds them readable", async () => {
    const db = t.server.app.db;
    const secretBody = { url: 'https://example.test/call/call_1#k=ck_secret_shown_once' };
    await runIdempotently(db, request('sealed'), async () => ({ status: 201, body: secretBody }));
    const row = await db('idempotency_keys').where({ principal_key: 'key:key_x', idempotency_key: 'sealed' }).first();
    expect(row.response_body).not.toContain('ck_secret');
    expect(Buffer.from(row.response_body, 'base64').toString('latin1')).not.toContain('ck_secret');
    const replay = await runIdempotently(db, request('sealed'), async () => ({ status: 500 }));
    expect(replay).toEqual({ status: 201, body: secretBody, replayed: true });
    await expect(
      runIdempotently(db, request('sealed', { credential: 'another' }), async () => ({ status: 500 })),
    ).rejects.toMatchObject({ status: 422 });
  });
});
