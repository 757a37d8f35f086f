// Limits on holding media connections: sockets per side of a call, and phone lines that go quiet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL } from '../../src/calls/media/protocol.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { Listener, Pbx, callApi, connect, listenUrl, refusal, whenClosed, type Join } from './support.js';
import { waitUntil } from '../support/waiting.js';

describe(`media connection limits (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let calls: ReturnType<typeof callApi>;
  beforeAll(async () => {
    t = await startTestServer({ MEDIA_SOCKETS_PER_SIDE: '2', AUDIOSOCKET_IDLE_TIMEOUT_MS: '300' });
    key = (await t.createKey(await t.createOrg({ name: 'Limits Org' }), 'test')).key;
    calls = callApi(t);
  });
  afterAll(() => t?.stop());

  async function readyCall() {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    return { ...call, agent: await calls.join(call.id, call.agentKey), customer: await calls.join(call.id, call.customerKey) };
  }
  const sourceUrl = (join: Join, sourceId: string) =>
    `${t.url.replace(/^http/, 'ws')}${join.stream!.path}?token=${encodeURIComponent(join.stream!.token)}&source_id=${sourceId}`;

  it('refuses a side more stream or listen sockets than its limit with 429 before the upgrade; a closed one frees its place', async () => {
    const { agent, customer } = await readyCall();
    const ears = [await Listener.open(listenUrl(t, customer)), await Listener.open(listenUrl(t, customer))];
    expect(await refusal(listenUrl(t, customer))).toEqual({ status: 429, body: { detail: REFUSAL.tooManySockets.detail } });
    const mics = [await connect(sourceUrl(customer, 'a')), await connect(sourceUrl(customer, 'b'))];
    expect(await refusal(sourceUrl(customer, 'c'))).toEqual({ status: 429, body: { detail: REFUSAL.tooManySockets.detail } });

    // The other side has its own places.
    const agentEar = await Listener.open(listenUrl(t, agent));
    const agentMic = await connect(sourceUrl(agent, 'a'));

    ears[0].close();
    await ears[0].closed;
    await waitUntil(async () => {
      try {
        ears[0] = await Listener.open(listenUrl(t, customer));
        return true;
      } catch (err) {
        if ((err as { status?: number }).status !== 429) throw err;
        return false;
      }
    }, 'a listen place to free up');
    expect(t.server.media.stats().transports.websocket.refused429).toBeGreaterThanOrEqual(2);

    const closed = [...ears.map((ear) => ear.ws), ...mics, agentEar.ws, agentMic].map(whenClosed);
    for (const ws of [...ears.map((ear) => ear.ws), ...mics, agentEar.ws, agentMic]) ws.close();
    await Promise.all(closed);
  });

  it('hangs up a joined phone line that sends nothing for the idle timeout', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const line = await (await calls.api(`/v1/calls/${call.id}/phone-line`, key, { method: 'POST', body: { side: 'customer' } })).json();
    const pbx = await Pbx.connect(t.server.ports.audiosocket!);
    pbx.sendUuid(line.audiosocket_id);
    await pbx.ended;
    // A hangup (0x00), not a refusal (0xff): the line had joined.
    expect(pbx.messages.map((message) => message.kind)).toEqual([0x00]);
    await waitUntil(() => (t.server.media.room(call.id)?.stats().endpoints.line ?? 0) === 0, 'the line to leave');
  });
});
