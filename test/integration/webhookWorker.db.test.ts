// The webhook worker against receivers that misbehave: one organization's endpoints that accept
// connections and never answer take only their own slots (per endpoint, per organization) while
// another organization's delivery goes at once, and organizations are claimed in turn; an endpoint
// that keeps failing is paused by its circuit breaker and probed once when the pause ends; deleting
// an endpoint while its attempt is in flight logs no error. Nothing waits for wall-clock time:
// requests are awaited as they arrive, and the server's clock (app.now) is moved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { Receiver } from '../support/webhookReceiver.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { claimDueDeliveries } from '../../src/webhooks/claims.js';
import { WebhookWorker } from '../../src/webhooks/worker.js';

// The defaults (src/config.ts): attempts in flight per organization and mode, and per endpoint.
const PER_ORGANIZATION = 10;
const PER_ENDPOINT = 3;

describe(`webhook delivery under misbehaving receivers (${backendName})`, () => {
  const logLines: string[] = [];
  let t: TestServer;
  /** Added to the wall clock by the server's clock; only ever grows, so stored times stay due. */
  let offset = 0;

  const api = (key: string) => async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${t.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
  };
  const newOrg = async () => api((await t.createKey(await t.createOrg({ balance: 10 }), 'test')).key);
  const register = async (call: ReturnType<typeof api>, url: string) => {
    const res = await call('POST', '/v1/webhook_endpoints', { url, enabled_events: ['session.created'] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const newSession = async (call: ReturnType<typeof api>) => {
    expect((await call('POST', '/v1/sessions', { agent_language: 'en', customer_language: 'de' })).status).toBe(201);
  };
  const deliveries = async (call: ReturnType<typeof api>, endpointId: string) => {
    const res = await call('GET', `/v1/webhook_endpoints/${endpointId}/deliveries`);
    expect(res.status).toBe(200);
    return res.body as Array<{ id: string; status: string; attempts: Array<{ status_code: number | null }>; next_attempt_at: string | null }>;
  };

  beforeAll(async () => {
    t = await startTestServer(
      // Attempts never time out during a test: a receiver that does not answer stays open until it is closed.
      { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true', WEBHOOK_TIMEOUT_MS: '60000' },
      { logLevel: 'info', logDestination: { write: (line: string) => logLines.push(line) } },
    );
    t.server.app.now = () => Date.now() + offset;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("delivers another organization's event at once while one organization's 16 endpoints hang, each organization and endpoint within its bound", async () => {
    const hanging = await Receiver.start();
    const fast = await Receiver.start();
    hanging.holding = true;
    const hogs: Array<{ call: ReturnType<typeof api>; id: string }> = [];
    try {
      const orgA = await newOrg();
      for (let i = 0; i < 16; i++) hogs.push({ call: orgA, id: await register(orgA, `${hanging.url}/a/${i}`) });
      await newSession(orgA);
      // 16 deliveries are due at once; the organization gets its share of attempts and no more.
      await hanging.until(PER_ORGANIZATION);
      // Another instance sharing the database finds the organization's share taken too.
      await new WebhookWorker(t.server.app).tick();

      const orgB = await newOrg();
      await register(orgB, fast.url);
      await newSession(orgB);
      // Whichever comes first: B's delivery, or one of A's requests given up.
      await Promise.race([fast.until(1), hanging.untilAbandoned(1)]);
      // B's delivery arrived while every one of A's requests was still open and unanswered.
      expect(fast.received).toHaveLength(1);
      expect(hanging.abandoned).toBe(0);
      expect(hanging.open).toBe(PER_ORGANIZATION);
      expect(hanging.received).toHaveLength(PER_ORGANIZATION);
      expect(JSON.parse(fast.received[0].body)).toMatchObject({ type: 'session.created' });

      // One endpoint with five deliveries due: a few at a time.
      const orgC = await newOrg();
      hogs.push({ call: orgC, id: await register(orgC, `${hanging.url}/c`) });
      for (let i = 0; i < 5; i++) await newSession(orgC);
      await hanging.until(PER_ORGANIZATION + PER_ENDPOINT);
      await new WebhookWorker(t.server.app).tick();
      expect(hanging.received.filter((request) => request.path === '/hooks/c')).toHaveLength(PER_ENDPOINT);
      expect(hanging.received).toHaveLength(PER_ORGANIZATION + PER_ENDPOINT);
      expect(hanging.abandoned).toBe(0);
    } finally {
      await Promise.all([hanging.close(), fast.close()]);
      // The hung attempts end with the connections (recorded as failures); the endpoints go.
      await t.server.app.webhooks.tick();
      for (const hog of hogs) await hog.call('DELETE', `/v1/webhook_endpoints/${hog.id}`);
    }
  });

  it("takes organizations in turn: one organization's backlog does not come before another's first delivery", async () => {
    const sink = await Receiver.start();
    const orgA = await newOrg();
    const orgB = await newOrg();
    const backlogged = await register(orgA, `${sink.url}/a`);
    const other = await register(orgB, `${sink.url}/b`);
    try {
      // Queued with the server's clock held back, so its worker leaves them: A's five, then B's one. The clock stays
      // held back while the test claims at the real time: a claim of the worker's still under way (its poll, a
      // nudge) would otherwise take some of them first.
      const { app } = t.server;
      app.now = () => Date.now() + offset - 3600_000;
      for (let i = 0; i < 5; i++) await newSession(orgA);
      await newSession(orgB);
      const now = Date.now() + offset;
      const claimed = await claimDueDeliveries(app.db, now, now + 60_000, { slots: 2, perOrganization: 10, perEndpoint: 10 });
      expect(claimed.map((delivery) => delivery.endpoint_id).sort()).toEqual([backlogged, other].sort());
    } finally {
      t.server.app.now = () => Date.now() + offset;
      await orgA('DELETE', `/v1/webhook_endpoints/${backlogged}`);
      await orgB('DELETE', `/v1/webhook_endpoints/${other}`);
      await sink.close();
    }
  });

  it('pauses an endpoint after five failed attempts in a row, then probes it once; paused deliveries are neither attempted nor failed', async () => {
    const failing = await Receiver.start();
    try {
      const org = await newOrg();
      const endpoint = await register(org, failing.url);
      failing.statuses = Array(6).fill(503);
      // One delivery at a time, so each attempt is one failure in a row.
      for (let i = 0; i < 5; i++) {
        await newSession(org);
        await t.server.app.webhooks.tick();
        expect(failing.received).toHaveLength(i + 1);
      }
      // Open: the next delivery waits, unattempted, though it is due.
      await newSession(org);
      await t.server.app.webhooks.tick();
      expect(failing.received).toHaveLength(5);
      let all = await deliveries(org, endpoint);
      expect(all[0]).toMatchObject({ status: 'pending', attempts: [] });
      expect(Date.parse(all[0].next_attempt_at!)).toBeLessThanOrEqual(t.server.app.now());
      expect(all.map((delivery) => delivery.status)).toEqual(Array(6).fill('pending'));

      // The pause (1 minute) ends: one probe, though all six are due by then. It fails: paused for 2 minutes.
      offset += 60_000;
      await t.server.app.webhooks.tick();
      expect(failing.received).toHaveLength(6);
      await t.server.app.webhooks.tick();
      offset += 60_000;
      await t.server.app.webhooks.tick();
      expect(failing.received).toHaveLength(6);

      // The next probe succeeds: the circuit closes and everything due goes.
      offset += 60_000;
      await t.server.app.webhooks.tick();
      all = await deliveries(org, endpoint);
      expect(all.map((delivery) => delivery.status)).toEqual(Array(6).fill('succeeded'));
      expect(failing.received).toHaveLength(12);
      expect(all.flatMap((delivery) => delivery.attempts.map((attempt) => attempt.status_code)).sort()).toEqual([...Array(6).fill(200), ...Array(6).fill(503)]);
    } finally {
      await failing.close();
    }
  });

  it('deletes an endpoint while its attempt is in flight without logging an error', async () => {
    const slow = await Receiver.start();
    try {
      slow.holding = true;
      const org = await newOrg();
      const endpoint = await register(org, slow.url);
      await newSession(org);
      await slow.until(1);
      const [delivery] = await deliveries(org, endpoint);
      const logged = logLines.length;
      expect((await org('DELETE', `/v1/webhook_endpoints/${endpoint}`)).status).toBe(204);
      slow.release(200);
      await t.server.app.webhooks.tick();
      const errors = logLines
        .slice(logged)
        .map((line) => JSON.parse(line))
        .filter((entry) => entry.level >= 50);
      expect(errors).toEqual([]);
      expect(await t.server.app.db('webhook_deliveries').where({ id: delivery.id })).toEqual([]);
      expect(await t.server.app.db('webhook_attempts').where({ delivery_id: delivery.id })).toEqual([]);
      expect((await org('GET', `/v1/webhook_endpoints/${endpoint}`)).status).toBe(404);
    } finally {
      await slow.close();
    }
  });
});
