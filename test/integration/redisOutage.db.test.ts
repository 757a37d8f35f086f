// Redis goes away under load and comes back (issue 33): two instances of one deployment on one
// PostgreSQL share a Redis of the test's own, which the test kills (SIGKILL) and starts again, empty,
// on the same port, while requests keep coming. Requests are answered throughout (rate limits count
// per instance meanwhile), every event reaches the streams of both instances exactly once, a call
// whose sockets are on its room's instance goes on, /readyz says degraded, and everything shared works
// again once Redis is back, without a restart. Each instance logs one warning per outage and one line
// when Redis is back.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callApi, connect, Listener, listenUrl, pattern, streamAudio, streamUrl, whenClosed } from '../media/support.js';
import { waitUntil } from '../support/waiting.js';
import { backendName } from '../support/databases.js';
import { startRedisServer, type RedisServer } from '../support/redisServer.js';
import { openEventStream, type EventStreamClient } from '../support/sse.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { startAnotherInstance, startTestServer, type TestServer } from '../support/testServer.js';

interface LogLine {
  level: number;
  msg: string;
  time: number;
}
const WARN = 40;
const ERROR = 50;

/** The log lines of one instance, as it wrote them. */
class Log {
  readonly lines: LogLine[] = [];
  readonly destination = { write: (line: string) => void this.lines.push(JSON.parse(line)) };
  /** Lines at warn or above since the `from`-th line. */
  warningsFrom(from: number): LogLine[] {
    return this.lines.slice(from).filter((line) => line.level >= WARN);
  }
}

/** Requests sent one after another until stopped, each answer's status kept; a request that fails ends it. */
class SteadyLoad {
  readonly answers: number[] = [];
  private stopped = false;
  private failure: unknown = null;
  private readonly running: Promise<void>;

  constructor(send: (n: number) => Promise<number>) {
    this.running = (async () => {
      try {
        for (let n = 0; !this.stopped; n++) this.answers.push(await send(n));
      } catch (err) {
        this.failure = err;
      }
    })();
  }

  /** Resolves once `more` requests beyond those answered now have been answered. */
  async further(more: number): Promise<void> {
    const target = this.answers.length + more;
    await waitUntil(() => this.answers.length >= target || this.failure !== null, `${more} more answered requests`);
    if (this.failure !== null) throw this.failure;
  }

  /** The statuses answered, once the request under way is. */
  async stop(): Promise<number[]> {
    this.stopped = true;
    await this.running;
    if (this.failure !== null) throw this.failure;
    return this.answers;
  }
}

describe.skipIf(backendName !== 'postgres')('Redis stopped and started under load, two instances', () => {
  let redis: RedisServer;
  let first: TestServer;
  let second: TestServer;
  const logs = { first: new Log(), second: new Log() };
  const prefix = `test-${randomBytes(4).toString('hex')}:`;
  // Leases renewed every half second: what was held in Redis is back within a second of its return. A
  // Redis that answers slowly on a loaded machine is not one that is away: commands wait up to a minute.
  const env = () => ({
    REDIS_URL: redis.url,
    REDIS_PREFIX: prefix,
    REDIS_COMMAND_TIMEOUT_MS: '60000',
    INSTANCE_HEARTBEAT_MS: '1000',
    RATE_LIMIT_PER_MINUTE: '1000',
  });
  const streams: EventStreamClient[] = [];
  const loads: SteadyLoad[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    first = await startTestServer(env(), { logLevel: 'info', logDestination: logs.first.destination });
    second = await startAnotherInstance(first, env(), { logLevel: 'info', logDestination: logs.second.destination });
  });
  let linesAtStart = { first: 0, second: 0 };
  beforeEach(async () => {
    await readinessBecomes(ready);
    linesAtStart = { first: logs.first.lines.length, second: logs.second.lines.length };
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await Promise.allSettled(loads.splice(0).map((load) => load.stop()));
    // Every test leaves Redis running, as it found it.
    await redis.start().catch(() => undefined);
    // Nothing failed on the way (an error is logged for what the server did not expect).
    for (const name of ['first', 'second'] as const) {
      expect(logs[name].lines.slice(linesAtStart[name]).filter((line) => line.level >= ERROR).map((line) => line.msg)).toEqual([]);
    }
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await redis?.kill();
  });

  const instances = () => [first, second];
  const readiness = async (t: TestServer) => {
    const res = await fetch(`${t.url}/readyz`);
    return { status: res.status, body: await res.json() };
  };
  const degraded = { status: 200, body: { status: 'degraded', degraded: ['redis'] } };
  const ready = { status: 200, body: { status: 'ok' } };
  /** Waits until every instance's /readyz answers `expected`. */
  const readinessBecomes = (expected: typeof degraded | typeof ready) =>
    waitUntil(
      async () => (await Promise.all(instances().map(readiness))).every((r) => JSON.stringify(r) === JSON.stringify(expected)),
      `/readyz to answer ${JSON.stringify(expected.body)} on both instances`,
    );
  const post = (t: TestServer, path: string, key: string, body: unknown) =>
    fetch(`${t.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  it('/readyz answers 200 degraded, naming Redis, while it is away, and ok again once it is back', async () => {
    for (const t of instances()) expect(await readiness(t)).toEqual(ready);
    await redis.kill();
    await readinessBecomes(degraded);
    await redis.start();
    await readinessBecomes(ready);
  });

  it('answers every request while Redis is away, counting rate limits on each instance, shared again once it is back; one warning per outage', async () => {
    const { key: loadKey } = await first.createKey(await first.createOrg(), 'test');
    const load = new SteadyLoad(async (n) => (await fetch(`${instances()[n % 2]!.url}/v1/account`, { headers: { Authorization: `Bearer ${loadKey}` } })).status);
    loads.push(load);
    const remaining = async (t: TestServer, key: string) => {
      const res = await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      return Number(res.headers.get('x-ratelimit-remaining'));
    };
    const freshKey = async () => (await first.createKey(await first.createOrg(), 'test')).key;
    // Shared: a request on either instance spends the same window.
    const before = await freshKey();
    expect([await remaining(first, before), await remaining(second, before)]).toEqual([999, 998]);

    const linesBefore = { first: logs.first.lines.length, second: logs.second.lines.length };
    await redis.kill();
    await load.further(20);
    // Each instance counts on its own.
    const during = await freshKey();
    expect([await remaining(first, during), await remaining(second, during), await remaining(first, during)]).toEqual([999, 999, 998]);
    await load.further(20);

    await redis.start();
    await readinessBecomes(ready);
    const after = await freshKey();
    expect([await remaining(first, after), await remaining(second, after)]).toEqual([999, 998]);
    await load.further(20);
    expect(new Set(await load.stop())).toEqual(new Set([200]));

    // One warning per outage (saying that rate limits count per instance), one line once it is back.
    await waitUntil(() => logs.first.lines.slice(linesBefore.first).some((l) => l.msg.startsWith('redis: back')), 'the first instance to log the return');
    await waitUntil(() => logs.second.lines.slice(linesBefore.second).some((l) => l.msg.startsWith('redis: back')), 'the second instance to log the return');
    for (const [log, from] of [
      [logs.first, linesBefore.first],
      [logs.second, linesBefore.second],
    ] as const) {
      const warnings = log.warningsFrom(from);
      expect(warnings.map((line) => line.msg)).toEqual([expect.stringMatching(/^redis: unreachable.*rate limits count on each instance/)]);
      expect(log.lines.slice(from).filter((line) => line.msg.startsWith('redis: back'))).toHaveLength(1);
    }
  });

  it('every event reaches the streams of both instances exactly once, in order, across the outage', async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    for (const t of instances()) {
      const stream = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' });
      expect(stream.status).toBe(200);
      streams.push(stream);
    }
    await waitUntil(() => streams.every((s) => s.comments.includes('connected')), 'the streams to connect');
    // A poster per instance, each making sessions one after another: its events are made in that order.
    const made = { first: [] as string[], second: [] as string[] };
    const poster = (t: TestServer, sessions: string[]) =>
      new SteadyLoad(async () => {
        const res = await post(t, '/v1/sessions', key, { agent_language: 'en' });
        if (res.status === 201) sessions.push((await res.json()).id);
        return res.status;
      });
    const posters = [poster(first, made.first), poster(second, made.second)];
    loads.push(...posters);
    const further = (n: number) => Promise.all(posters.map((p) => p.further(n)));

    await further(3);
    await redis.kill();
    await further(10);
    await redis.start();
    await further(10);
    for (const p of posters) expect(new Set(await p.stop())).toEqual(new Set([201]));

    const logged = await first.server.app.db('events').where({ org_id: orgId, type: 'session.created' }).orderBy('seq').select('id', 'payload');
    expect(logged).toHaveLength(made.first.length + made.second.length);
    const eventOf = new Map(logged.map((row) => [(typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload).data.id as string, row.id as string]));
    const ids = (s: EventStreamClient) => s.events.filter((e) => e.event === 'session.created').map((e) => String(e.id));
    await waitUntil(() => streams.every((s) => ids(s).length >= logged.length), 'every event on both streams');
    for (const stream of streams) {
      const received = ids(stream);
      // Nothing lost, nothing twice ...
      expect([...received].sort()).toEqual(logged.map((row) => row.id).sort());
      // ... and each poster's events in the order it made them.
      for (const sessions of [made.first, made.second]) {
        const own = new Set(sessions.map((id) => eventOf.get(id)));
        expect(received.filter((id) => own.has(id))).toEqual(sessions.map((id) => eventOf.get(id)));
      }
    }

    // Back through Redis: a new event made on either instance reaches both streams, once.
    await readinessBecomes(ready);
    const res = await post(second, '/v1/sessions', key, { agent_language: 'en' });
    expect(res.status).toBe(201);
    const last = await first.server.app.db('events').where({ org_id: orgId, type: 'session.created' }).orderBy('seq', 'desc').first('id');
    for (const stream of streams) await stream.waitFor((e) => e.id === last.id);
    for (const stream of streams) expect(ids(stream).filter((id) => id === last.id)).toHaveLength(1);
  });

  it("a call whose sockets are on its room's instance goes on while Redis is away; the room's lease is taken again once it is back", async () => {
    const { key } = await first.createKey(await first.createOrg(), 'test');
    const calls = callApi(first);
    const call = await calls.createCall(key, { customer_language: 'es' });
    const agent = await calls.join(call.id, call.agentKey);
    const mic = await connect(streamUrl(first, agent)); // the room is made on the first instance
    const ear = await Listener.open(listenUrl(first, agent));
    // A listen socket on the other instance, relayed to the room on the instances' direct link: that
    // needs no Redis once made, so the socket hears the room throughout.
    const relayedBefore = await Listener.open(listenUrl(second, await callApi(second).join(call.id, call.agentKey)));
    await waitUntil(() => first.server.media.room(call.id)?.stats().endpoints.listen === 2, 'both listeners in the room');
    await waitUntil(() => first.server.media.stats().transports.bridge.linksOpen === 1, "the room's instance linked to the other");
    const probe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    const roomKey = `${prefix}room:${call.id}`;
    try {
      await probe.connect();
      expect(await probe.get(roomKey)).toBe(first.server.app.instanceId);
      probe.disconnect();
      const before = pattern(4_800, 3);
      await streamAudio(mic, before, 960, 1);
      expect((await relayedBefore.waitForBytes(before.length)).equals(before)).toBe(true);
      expect((await ear.waitForBytes(before.length)).equals(before)).toBe(true);
      ear.chunks.splice(0);

      await redis.kill();
      // Audio flows (test mode echoes the agent's voice to the agent's listen socket) ...
      const voice = pattern(9_600, 7);
      await streamAudio(mic, voice, 960, 1);
      expect((await ear.waitForBytes(voice.length)).equals(voice)).toBe(true);
      expect((await relayedBefore.waitForBytes(before.length + voice.length)).subarray(before.length).equals(voice)).toBe(true);
      // ... and a socket of the call that arrives meanwhile joins the room here.
      const lateEar = await Listener.open(listenUrl(first, await calls.join(call.id, call.agentKey)));
      await lateEar.waitForFrame((frame) => frame.type === 'provenance');
      const more = pattern(9_600, 21);
      await streamAudio(mic, more, 960, 1);
      expect((await lateEar.waitForBytes(more.length)).equals(more)).toBe(true);
      expect((await ear.waitForBytes(voice.length + more.length)).subarray(voice.length).equals(more)).toBe(true);

      // Back: the (empty) Redis names the room's instance again, a socket on the other instance is
      // relayed to the room as before, and the one relayed before the outage still hears the room.
      await redis.start();
      await probe.connect();
      await waitUntil(async () => (await probe.get(roomKey)) === first.server.app.instanceId, "the room's lease taken again");
      const relayedEar = await Listener.open(listenUrl(second, await callApi(second).join(call.id, call.agentKey)));
      await relayedEar.waitForFrame((frame) => frame.type === 'provenance');
      expect(second.server.media.room(call.id)).toBeUndefined();
      const after = pattern(9_600, 33);
      await streamAudio(mic, after, 960, 1);
      expect((await relayedEar.waitForBytes(after.length)).equals(after)).toBe(true);
      const all = Buffer.concat([before, voice, more, after]);
      expect((await relayedBefore.waitForBytes(all.length)).equals(all)).toBe(true);

      const closed = whenClosed(mic);
      expect((await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST' })).status).toBe(200);
      expect(await closed).toEqual({ code: 4000, reason: 'call ended' });
      for (const listener of [ear, lateEar, relayedEar, relayedBefore]) expect(await listener.closed).toEqual({ code: 4000, reason: 'call ended' });
    } finally {
      probe.disconnect();
      mic.close();
    }
  });

  it("a call ended through the other instance while Redis is away ends on the room's instance", async () => {
    const { key } = await first.createKey(await first.createOrg(), 'test');
    const call = await callApi(first).createCall(key, { customer_language: 'es' });
    const mic = await connect(streamUrl(first, await callApi(first).join(call.id, call.agentKey)));
    await waitUntil(() => first.server.media.room(call.id) !== undefined, 'the room on the first instance');
    const closed = whenClosed(mic);
    await redis.kill();
    expect((await callApi(second).api(`/v1/calls/${call.id}/end`, key, { method: 'POST' })).status).toBe(200);
    expect(await closed).toEqual({ code: 4000, reason: 'call ended' });
    expect(first.server.media.room(call.id)).toBeUndefined();
  });
});

describe.skipIf(backendName !== 'postgres')('one instance loses Redis while the other keeps it', () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  let keeps: TestServer;
  let loses: TestServer;
  beforeAll(async () => {
    redis = await startRedisServer();
    proxy = new TcpProxy({ host: '127.0.0.1', port: redis.port });
    await proxy.start();
    const prefix = `test-${randomBytes(4).toString('hex')}:`;
    keeps = await startTestServer({ REDIS_URL: redis.url, REDIS_PREFIX: prefix });
    const shared = keeps.server.app.config.databaseUrl!;
    loses = await startTestServer({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REDIS_PREFIX: prefix }, { databaseUrl: () => shared });
  });
  afterAll(async () => {
    await loses?.stop();
    await keeps?.stop();
    await proxy?.kill();
    await redis?.kill();
  });

  it("each instance's events reach the other's streams, once: read from the log meanwhile, and once it can publish again", async () => {
    const orgId = await keeps.createOrg();
    const { key } = await keeps.createKey(orgId, 'test');
    const streams: EventStreamClient[] = [];
    for (const t of [keeps, loses]) {
      const stream = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' });
      expect(stream.status).toBe(200);
      streams.push(stream);
    }
    try {
      await waitUntil(() => streams.every((s) => s.comments.includes('connected')), 'the streams to connect');
      const made = async (t: TestServer) => {
        const res = await fetch(`${t.url}/v1/sessions`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ agent_language: 'en' }),
        });
        expect(res.status).toBe(201);
        const session = (await res.json()).id as string;
        const rows = await keeps.server.app.db('events').where({ org_id: orgId, type: 'session.created' }).select('id', 'payload');
        return rows.find((row) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload).data.id === session)!.id as string;
      };
      await proxy.kill();
      await waitUntil(async () => (await (await fetch(`${loses.url}/readyz`)).json()).status === 'degraded', 'the instance to see Redis gone');
      // Made where Redis is: the instance without it reads it from the log.
      const fromKeeper = await made(keeps);
      await streams[1]!.waitFor((e) => e.id === fromKeeper);
      // Made where Redis is not: the other hears of it once this instance can publish again.
      const fromLoser = [await made(loses), await made(loses)];
      await streams[1]!.waitFor((e) => e.id === fromLoser[1]);
      await proxy.start();
      for (const stream of streams) await stream.waitFor((e) => e.id === fromLoser[1]);
      // Back through Redis both ways.
      const after = [await made(keeps), await made(loses)];
      for (const stream of streams) await stream.waitFor((e) => e.id === after[1]);
      for (const stream of streams) {
        await stream.waitFor((e) => e.id === after[0]);
        const seen = stream.events.filter((e) => e.event === 'session.created').map((e) => e.id);
        // Each event once; each instance's events in the order it made them (two instances' events
        // made a moment apart may arrive either way round: docs/several-instances.md).
        expect([...seen].sort()).toEqual([fromKeeper, ...fromLoser, ...after].sort());
        expect(seen.filter((id) => id === fromKeeper || id === after[0])).toEqual([fromKeeper, after[0]]);
        expect(seen.filter((id) => (id !== null && fromLoser.includes(id)) || id === after[1])).toEqual([...fromLoser, after[1]]);
      }
    } finally {
      for (const stream of streams) stream.close();
    }
  });
});
