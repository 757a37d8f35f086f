// Signed webhooks end to end: endpoints registered through the API, real events POSTed to a real HTTP
// receiver in the test, signatures checked here with node:crypto alone, retries, resends, the 3-day
// give-up that disables an endpoint, mode isolation, the private-address rule (also when a name
// resolves to a private address only at delivery, and without showing the address), secret rotation
// with an overlap, and no secret in the log. The server's clock is moved (app.now) and its worker
// driven with `tick()`: nothing waits for wall-clock time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { expectedSignature, Receiver, signatureParts, verify } from '../support/webhookReceiver.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { runHousekeeping } from '../../src/deployment/housekeeping.js';
import { WebhookWorker } from '../../src/webhooks/worker.js';

const DAY = 24 * 3600_000;

describe(`signed webhooks (${backendName})`, () => {
  const logLines: string[] = [];
  const secrets: string[] = [];
  let t: TestServer;
  let strict: TestServer;
  let receiver: Receiver;
  /** Added to the wall clock by the server's clock; only ever grows, so stored times stay due. */
  let offset = 0;
  /** While set, the server's clock stands still there (to land exactly on a due time). */
  let frozenAt: number | null = null;
  const now = () => frozenAt ?? Date.now() + offset;

  const api = (server: TestServer, key: string) => async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
  };
  const newOrg = async (server: TestServer) => {
    const orgId = await server.createOrg({ balance: 10 });
    return { orgId, test: api(server, (await server.createKey(orgId, 'test')).key), live: api(server, (await server.createKey(orgId, 'live')).key) };
  };
  const register = async (call: ReturnType<typeof api>, body: Record<string, unknown>) => {
    const res = await call('POST', '/v1/webhook_endpoints', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    secrets.push(res.body.secret);
    return res.body as { id: string; secret: string };
  };
  const deliveries = async (call: ReturnType<typeof api>, endpointId: string) => {
    const res = await call('GET', `/v1/webhook_endpoints/${endpointId}/deliveries`);
    expect(res.status).toBe(200);
    return res.body as Array<{ id: string; event_id: string; event_type: string; status: string; attempts: Array<{ attempted_at: string; status_code: number | null; error: string | null }>; next_attempt_at: string | null }>;
  };
  const newSession = async (call: ReturnType<typeof api>) => {
    const res = await call('POST', '/v1/sessions', { agent_language: 'en', customer_language: 'de' });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const storedBody = async (eventId: string) => {
    const { rows } = await t.server.app.db.raw<{ rows: Array<{ body: string }> }>('select payload::text as body from events where id = ?', [eventId]);
    return rows[0].body;
  };

  beforeAll(async () => {
    [t, strict, receiver] = await Promise.all([
      startTestServer({ WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' }, { logLevel: 'trace', logDestination: { write: (line: string) => logLines.push(line) } }),
      startTestServer(),
      Receiver.start(),
    ]);
    t.server.app.now = now;
  });
  afterAll(async () => {
    await Promise.all([t?.stop(), strict?.stop(), receiver?.close()]);
  });

  it('refuses URLs webhooks may not go to, and event types it does not know', async () => {
    const { test, live } = await newOrg(strict);
    const refusal = async (call: ReturnType<typeof api>, body: Record<string, unknown>) => {
      const res = await call('POST', '/v1/webhook_endpoints', { enabled_events: ['*'], ...body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      return res.body.detail[0];
    };
    for (const url of ['not a url', 'ftp://hooks.example.com/x', '/relative']) {
      expect(await refusal(test, { url })).toMatchObject({ loc: ['body', 'url'], type: 'url_invalid' });
    }
    expect(await refusal(test, { url: 'https://user:pw@hooks.example.com/' })).toMatchObject({ type: 'url_credentials' });
    for (const url of ['http://127.0.0.1:8080/', 'http://[::1]/', 'https://10.1.2.3/', 'http://169.254.169.254/latest', 'http://localhost/x', 'http://[fd00::1]/', 'http://192.168.1.1/']) {
      expect(await refusal(test, { url })).toMatchObject({ loc: ['body', 'url'], type: 'url_private_address' });
    }
    expect(await refusal(live, { url: 'http://hooks.example.com/x' })).toMatchObject({ type: 'url_https_required' });
    expect((await refusal(test, { url: 'https://hooks.example.com/x', enabled_events: ['call.nonsense'] })).loc).toEqual(['body', 'enabled_events', 0]);
    expect(await refusal(test, { url: 'https://hooks.example.com/x', enabled_events: ['*', 'call.ended'] })).toMatchObject({ type: 'wildcard_alone' });

    const created = await register(test, { url: 'https://hooks.example.com/x', enabled_events: ['call.ended'], description: 'tickets' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const read = await test('GET', `/v1/webhook_endpoints/${created.id}`);
    expect(read.body).toMatchObject({ id: created.id, url: 'https://hooks.example.com/x', enabled_events: ['call.ended'], disabled: false, livemode: false });
    expect(read.body.secret).toBeUndefined();
    expect((await test('PATCH', `/v1/webhook_endpoints/${created.id}`, { url: 'http://10.0.0.1/' })).status).toBe(422);
    // Scopes: reading needs webhooks:read, changing webhooks:write.
    const { orgId } = await newOrg(strict);
    const reader = api(strict, (await strict.createKey(orgId, 'test', ['webhooks:read'])).key);
    expect((await reader('GET', '/v1/webhook_endpoints')).status).toBe(200);
    const refused = await reader('POST', '/v1/webhook_endpoints', { url: 'https://hooks.example.com/', enabled_events: ['*'] });
    expect(refused).toEqual({ status: 403, body: { detail: 'missing scope: webhooks:write' } });
  });

  it('keeps to 16 endpoints per mode even when they are created at once', async () => {
    const { test, live } = await newOrg(t);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => test('POST', '/v1/webhook_endpoints', { url: `https://hooks.example.com/${i}`, enabled_events: ['*'] })),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(16);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(4);
    for (const answer of answers) if (answer.status === 201) secrets.push(answer.body.secret);
    expect((await test('GET', '/v1/webhook_endpoints')).body).toHaveLength(16);
    expect((await register(live, { url: 'https://hooks.example.com/live', enabled_events: ['*'] })).id).toMatch(/^we_/);
  });

  it('dates a manual disabling by the server\'s clock', async () => {
    const { test } = await newOrg(t);
    const endpoint = await register(test, { url: 'https://hooks.example.com/clock', enabled_events: ['*'] });
    offset += 3_600_000;
    frozenAt = now();
    try {
      const disabled = await test('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { disabled: true });
      expect(disabled.body).toMatchObject({ disabled: true, disabled_reason: 'manual', disabled_at: new Date(frozenAt).toISOString() });
    } finally {
      frozenAt = null;
    }
  });

  it('checks the address at delivery: a name that now resolves to loopback gets nothing', async () => {
    const { test } = await newOrg(strict);
    const endpoint = await register(test, { url: 'https://hooks.example.com/x', enabled_events: ['session.created'] });
    // As if the name had been re-pointed at this machine after registration (DNS rebinding).
    await strict.server.app.db('webhook_endpoints').where({ id: endpoint.id }).update({ url: receiver.url.replace('127.0.0.1', 'localhost') });
    const before = receiver.received.length;
    await newSession(test);
    await strict.server.app.webhooks.tick();
    const [delivery] = await deliveries(test, endpoint.id);
    expect(delivery.status).toBe('pending');
    expect(delivery.attempts).toHaveLength(1);
    // The host only: what the name resolved to inside the server's network is not shown.
    expect(delivery.attempts[0]).toEqual({
      attempted_at: expect.any(String),
      status_code: null,
      error: 'localhost resolves to a private or local address; webhooks are not delivered there',
    });
    expect(receiver.received.length).toBe(before);
  });

  it('names the host, never the address it resolved to, when a connection fails', async () => {
    const { test } = await newOrg(t);
    const closed = await Receiver.start();
    const url = closed.url.replace('127.0.0.1', 'localhost');
    await closed.close();
    const endpoint = await register(test, { url, enabled_events: ['session.created'] });
    await newSession(test);
    await t.server.app.webhooks.tick();
    const [delivery] = await deliveries(test, endpoint.id);
    expect(delivery.attempts).toEqual([{ attempted_at: expect.any(String), status_code: null, error: 'ECONNREFUSED: localhost refused the connection' }]);
  });

  it('delivers a real event, signed, only of the types asked for', async () => {
    const { test } = await newOrg(t);
    const endpoint = await register(test, { url: receiver.url, enabled_events: ['session.created'] });
    const before = receiver.received.length;
    const sessionId = await newSession(test);
    await receiver.until(before + 1);
    const received = receiver.received[before];

    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers['user-agent']).toMatch(/^Live-Interpretation-API-Webhooks\//);
    const { t: signedAt, ok } = verify(endpoint.secret, received, Math.floor(now() / 1000));
    expect(ok).toBe(true);
    expect(verify(endpoint.secret.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), received, signedAt).ok).toBe(false);
    expect(verify(endpoint.secret, received, signedAt + 301).ok).toBe(false);
    const event = JSON.parse(received.body);
    expect(event).toMatchObject({ type: 'session.created', livemode: false, data: { id: sessionId } });
    // The bytes the streams send: the event as stored.
    expect(received.body).toBe(await storedBody(event.id));

    expect((await test('POST', `/v1/sessions/${sessionId}/close`)).status).toBe(200);
    await t.server.app.webhooks.tick();
    const [delivery, ...others] = await deliveries(test, endpoint.id);
    expect(others).toEqual([]);
    expect(received.headers['webhook-id']).toBe(delivery.id);
    expect(delivery).toMatchObject({ event_id: event.id, event_type: 'session.created', status: 'succeeded', next_attempt_at: null });
    expect(delivery.attempts).toEqual([{ attempted_at: expect.any(String), status_code: 200, error: null }]);
  });

  it('retries after a 500, then succeeds; a resend sends it once more; rotation re-signs', async () => {
    const { test } = await newOrg(t);
    const endpoint = await register(test, { url: receiver.url, enabled_events: ['*'] });
    receiver.statuses = [500];
    const before = receiver.received.length;
    await newSession(test);
    await t.server.app.webhooks.tick();
    let [delivery] = await deliveries(test, endpoint.id);
    expect(delivery.status).toBe('pending');
    expect(delivery.attempts).toEqual([{ attempted_at: expect.any(String), status_code: 500, error: null }]);
    expect(Date.parse(delivery.next_attempt_at!) - Date.parse(delivery.attempts[0].attempted_at)).toBe(60_000);

    // Not due yet: nothing is sent.
    await t.server.app.webhooks.tick();
    expect((await deliveries(test, endpoint.id))[0].attempts).toHaveLength(1);
    offset += 60_000;
    await t.server.app.webhooks.tick();
    [delivery] = await deliveries(test, endpoint.id);
    expect(delivery).toMatchObject({ status: 'succeeded', next_attempt_at: null });
    expect(delivery.attempts.map((a) => a.status_code)).toEqual([500, 200]);
    expect(receiver.received.length).toBe(before + 2);

    const rotated = await test('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.secret);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    const resent = await test('POST', `/v1/webhook_endpoints/${endpoint.id}/deliveries/${delivery.id}/resend`);
    expect(resent.status).toBe(200);
    expect(resent.body).toMatchObject({ id: delivery.id, status: 'pending' });
    await t.server.app.webhooks.tick();
    await receiver.until(before + 3);
    const again = receiver.received[before + 2];
    expect(again.headers['webhook-id']).toBe(delivery.id);
    expect(again.body).toBe(receiver.received[before].body);
    expect(verify(rotated.body.secret, again, Math.floor(now() / 1000)).ok).toBe(true);
    expect(verify(endpoint.secret, again, Math.floor(now() / 1000)).ok).toBe(false);
    expect((await deliveries(test, endpoint.id))[0].attempts.map((a) => a.status_code)).toEqual([500, 200, 200]);
    expect((await test('POST', `/v1/webhook_endpoints/${endpoint.id}/deliveries/wd_unknown/resend`)).status).toBe(404);
  });

  it('rotates with an overlap: both secrets sign, the new one first, until it ends; then only the new one, and the old is erased', async () => {
    const { test } = await newOrg(t);
    const endpoint = await register(test, { url: receiver.url, enabled_events: ['session.created'] });
    const rotate = (body?: unknown) => test('POST', `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, body);
    for (const body of [{ previous_secret_expires_in: 86_401 }, { previous_secret_expires_in: -1 }, { previous_secret_expires_in: 1.5 }, { expire_previous_in: 60 }]) {
      expect((await rotate(body)).status, JSON.stringify(body)).toBe(422);
    }
    expect((await rotate({ previous_secret_expires_in: 86_401 })).body.detail).toEqual([
      { loc: ['body', 'previous_secret_expires_in'], msg: 'must be <= 86400', type: 'maximum' },
    ]);
    /** The signatures of the next delivery, each named by the secret that made it. */
    const nextSignatures = async (names: Record<string, string>) => {
      const before = receiver.received.length;
      await newSession(test);
      await receiver.until(before + 1);
      await t.server.app.webhooks.tick();
      const received = receiver.received[before];
      const { t: signedAt, v1 } = signatureParts(received);
      return v1.map((hex) => Object.keys(names).find((name) => expectedSignature(names[name], signedAt, received.body) === hex) ?? hex);
    };

    const rotatedAt = (frozenAt = now());
    const first = await rotate({ previous_secret_expires_in: 3600 });
    frozenAt = null;
    expect(first.status).toBe(200);
    secrets.push(first.body.secret);
    expect(first.body).toMatchObject({ id: endpoint.id, previous_secret_expires_at: new Date(rotatedAt + 3_600_000).toISOString() });
    const overlapEnds = Date.parse(first.body.previous_secret_expires_at);
    expect((await test('GET', `/v1/webhook_endpoints/${endpoint.id}`)).body).toMatchObject({ previous_secret_expires_at: first.body.previous_secret_expires_at });
    expect(await nextSignatures({ created: endpoint.secret, first: first.body.secret })).toEqual(['first', 'created']);

    // A rotation during the overlap: the secret it replaces signs second; the one before stops.
    const second = await rotate({ previous_secret_expires_in: 600 });
    secrets.push(second.body.secret);
    const secondEnds = Date.parse(second.body.previous_secret_expires_at);
    expect(secondEnds).toBeLessThan(overlapEnds);
    expect(await nextSignatures({ created: endpoint.secret, first: first.body.secret, second: second.body.secret })).toEqual(['second', 'first']);

    offset = Math.max(offset, secondEnds - Date.now());
    expect((await test('GET', `/v1/webhook_endpoints/${endpoint.id}`)).body.previous_secret_expires_at).toBeNull();
    expect(await nextSignatures({ first: first.body.secret, second: second.body.secret })).toEqual(['second']);
    expect(await runHousekeeping(t.server.app)).toBe(true);
    expect(await t.server.app.db('webhook_endpoints').where({ id: endpoint.id }).first('previous_secret_sealed', 'previous_secret_expires_at')).toEqual({
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
    });

    // No body, or 0: the old secret stops at once.
    const third = await rotate();
    secrets.push(third.body.secret);
    expect(third.body.previous_secret_expires_at).toBeNull();
    expect(await nextSignatures({ second: second.body.secret, third: third.body.secret })).toEqual(['third']);
  });

  it('backs off 1 min doubling up to 6 h, gives up 3 days after the first attempt, and disables the endpoint with an event', async () => {
    const { test } = await newOrg(t);
    const failing = await Receiver.start();
    try {
      failing.statuses = Array(100).fill(503);
      const endpoint = await register(test, { url: failing.url, enabled_events: ['session.created'] });
      const watcher = await register(test, { url: receiver.url, enabled_events: ['webhook_endpoint.disabled'] });
      const heard = receiver.received.length;
      await newSession(test);
      await t.server.app.webhooks.tick();

      const gaps: number[] = [];
      let [delivery] = await deliveries(test, endpoint.id);
      const first = Date.parse(delivery.attempts[0].attempted_at);
      while (delivery.status === 'pending') {
        const last = Date.parse(delivery.attempts.at(-1)!.attempted_at);
        gaps.push(Date.parse(delivery.next_attempt_at!) - last);
        frozenAt = Date.parse(delivery.next_attempt_at!);
        await t.server.app.webhooks.tick();
        [delivery] = await deliveries(test, endpoint.id);
        expect(delivery.attempts.length).toBe(gaps.length + 1);
      }
      offset = frozenAt! - Date.now();
      frozenAt = null;
      // 1, 2, 4, ... 256 minutes, then every 6 hours, the last one cut to exactly 3 days after the first.
      const expected: number[] = [];
      for (let spent = 0, n = 0; spent < 3 * DAY; n++) {
        const gap = Math.min(60_000 * 2 ** n, 6 * 3600_000, 3 * DAY - spent);
        expected.push(gap);
        spent += gap;
      }
      expect(gaps).toEqual(expected);
      expect(Date.parse(delivery.attempts.at(-1)!.attempted_at) - first).toBe(3 * DAY);
      expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null });
      expect(failing.received.length).toBe(expected.length + 1);

      const disabled = await test('GET', `/v1/webhook_endpoints/${endpoint.id}`);
      expect(disabled.body).toMatchObject({ disabled: true, disabled_reason: 'failing' });
      // The watcher hears of it, once.
      await t.server.app.webhooks.tick();
      await receiver.until(heard + 1);
      expect(receiver.received.length).toBe(heard + 1);
      const event = JSON.parse(receiver.received[heard].body);
      expect(event).toMatchObject({ type: 'webhook_endpoint.disabled', data: { id: endpoint.id, disabled: true, disabled_reason: 'failing' } });
      expect(verify(watcher.secret, receiver.received[heard], Math.floor(now() / 1000)).ok).toBe(true);

      // Disabled: new events are not queued for it, and resending is refused until it is enabled.
      await newSession(test);
      await t.server.app.webhooks.tick();
      expect(await deliveries(test, endpoint.id)).toHaveLength(1);
      expect((await test('POST', `/v1/webhook_endpoints/${endpoint.id}/deliveries/${delivery.id}/resend`)).status).toBe(409);
      const enabled = await test('PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { disabled: false });
      expect(enabled.body).toMatchObject({ disabled: false, disabled_reason: null, disabled_at: null });
      failing.statuses = [];
      expect((await test('POST', `/v1/webhook_endpoints/${endpoint.id}/deliveries/${delivery.id}/resend`)).status).toBe(200);
      await t.server.app.webhooks.tick();
      expect((await deliveries(test, endpoint.id))[0]).toMatchObject({ id: delivery.id, status: 'succeeded' });
    } finally {
      await failing.close();
    }
  });

  it('keeps modes apart: a test endpoint never gets live events, nor sees live endpoints', async () => {
    const { test, live } = await newOrg(t);
    const testReceiver = await Receiver.start();
    try {
      const testEndpoint = await register(test, { url: testReceiver.url, enabled_events: ['*'] });
      const liveEndpoint = await register(live, { url: receiver.url, enabled_events: ['*'] });
      const before = receiver.received.length;
      await newSession(live);
      await receiver.until(before + 1);
      await t.server.app.webhooks.tick();
      expect(JSON.parse(receiver.received[before].body)).toMatchObject({ type: 'session.created', livemode: true });
      expect(testReceiver.received).toEqual([]);
      expect(await deliveries(test, testEndpoint.id)).toEqual([]);
      expect((await test('GET', `/v1/webhook_endpoints/${liveEndpoint.id}`)).status).toBe(404);
      expect((await test('GET', '/v1/webhook_endpoints')).body.map((e: { id: string }) => e.id)).toEqual([testEndpoint.id]);
      expect((await test('DELETE', `/v1/webhook_endpoints/${liveEndpoint.id}`)).status).toBe(404);
      expect((await live('DELETE', `/v1/webhook_endpoints/${liveEndpoint.id}`)).status).toBe(204);
      expect((await live('GET', `/v1/webhook_endpoints/${liveEndpoint.id}`)).status).toBe(404);
    } finally {
      await testReceiver.close();
    }
  });

  it('sends each delivery once when two workers share the database (FOR UPDATE SKIP LOCKED)', async () => {
    const { test } = await newOrg(t);
    const counting = await Receiver.start();
    try {
      const endpoint = await register(test, { url: counting.url, enabled_events: ['session.created'] });
      // The clock held back: the deliveries pile up, not yet due, until both workers go at once.
      frozenAt = Date.now() - 3600_000;
      for (let i = 0; i < 25; i++) await newSession(test);
      frozenAt = null;
      const other = new WebhookWorker(t.server.app);
      await Promise.all([other.tick(), t.server.app.webhooks.tick(), other.tick()]);
      await counting.until(25);
      // The receiver counts a request when it arrives; its worker records the answer a moment later.
      await Promise.all([other.tick(), t.server.app.webhooks.tick()]);
      expect(new Set(counting.received.map((r) => r.headers['webhook-id'])).size).toBe(25);
      expect(counting.received.length).toBe(25);
      const all = await deliveries(test, endpoint.id);
      expect(all.map((d) => [d.status, d.attempts.length])).toEqual(Array(25).fill(['succeeded', 1]));
    } finally {
      await counting.close();
    }
  });

  it('never writes a signing secret to the log', () => {
    expect(secrets.length).toBeGreaterThan(5);
    expect(logLines.length).toBeGreaterThan(0);
    const log = logLines.join('\n');
    for (const secret of secrets) {
      expect(log.includes(secret)).toBe(false);
      expect(log.includes(secret.slice('whsec_'.length))).toBe(false);
    }
  });
});
