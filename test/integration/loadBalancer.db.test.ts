// Two instances behind a real nginx configured as deploy/nginx.conf (round robin for requests and
// event streams, media sockets hashed on the call id): requests spread over both, an event stream
// through it hears the events both make, and a call's sockets through it meet in one room on one
// instance without a relay. Needs nginx (.ci/run installs nginx-light); without it the test fails.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi, connect, Listener, listenUrl, pattern, streamUrl } from '../media/support.js';
import { backendName } from '../support/databases.js';
import { startNginx, type Nginx } from '../support/nginx.js';
import { openEventStream } from '../support/sse.js';
import { startAnotherInstance, startTestServer, type TestServer } from '../support/testServer.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe.skipIf(backendName !== 'postgres')('two instances behind nginx (deploy/nginx.conf)', () => {
  let instances: TestServer[];
  let nginx: Nginx;
  beforeAll(async () => {
    // Commands wait up to a minute: a loaded machine's busy event loop is not Redis being away.
    const env = { REDIS_URL, REDIS_COMMAND_TIMEOUT_MS: '60000', REDIS_PREFIX: `test-${randomBytes(4).toString('hex')}:`, TRUST_PROXY: '1' };
    const first = await startTestServer(env);
    const second = await startAnotherInstance(first, env);
    instances = [first, second];
    nginx = await startNginx(instances.map((instance) => new URL(instance.url).host));
  });
  afterAll(async () => {
    await nginx?.stop();
    for (const instance of [...(instances ?? [])].reverse()) await instance.stop();
  });

  const created = async (instance: TestServer) =>
    (await instance.server.app.metrics.requests.get()).values.find((v) => v.labels.operation === 'createSession' && v.labels.status === 201)?.value ?? 0;

  it('spreads requests over both instances, and an event stream through it hears the events of both', async () => {
    const [first] = instances;
    const { key } = await first.createKey(await first.createOrg(), 'test');
    const stream = await openEventStream(`${nginx.url}/v1/events`, { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' });
    expect(stream.status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${nginx.url}/v1/sessions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ agent_language: 'en' }),
      });
      expect(res.status).toBe(201);
      ids.push((await res.json()).id);
    }
    // Round robin: each instance made two of the four.
    expect(await Promise.all(instances.map(created))).toEqual([2, 2]);
    for (const id of ids) await stream.waitFor((event) => event.event === 'session.created' && event.data.data.id === id);
    expect(stream.events.filter((event) => event.event === 'session.created')).toHaveLength(4);
    stream.close();
  });

  it("routes a call's sockets to one instance, where they meet in its room without a relay", async () => {
    const [first] = instances;
    const { key } = await first.createKey(await first.createOrg(), 'test');
    const through = { url: nginx.url };
    const calls = callApi(through);
    const call = await calls.createCall(key, { customer_language: 'es' });
    const agent = await calls.join(call.id, call.agentKey);
    const ear = await Listener.open(listenUrl(through, agent));
    const mic = await connect(streamUrl(through, agent));
    const voice = pattern(9_600, 21);
    mic.send(voice);
    expect((await ear.waitForBytes(voice.length)).equals(voice)).toBe(true);
    const holders = instances.filter((instance) => instance.server.media.room(call.id) !== undefined);
    expect(holders).toHaveLength(1);
    expect(instances.map((instance) => instance.server.media.stats().transports.bridge.relaysOpened)).toEqual([0, 0]);
    mic.close();
    ear.close();
  });
});
