// The call page's WebRTC signalling socket over real WebSockets: relay between the two sides of one
// call only, of a page's own kinds and wrapped, presence frames, refusals like the media sockets,
// closing with the side's media, and TURN credentials that end with the call (the server's clock moved).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createHmac } from 'node:crypto';
import { CLOSE, SIGNAL_MAX_FRAME_BYTES, SIGNAL_MAX_SDP_CHARS, SIGNAL_REFUSED } from '../../src/calls/media/protocol.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { callApi, refusal, Signal, signalUrl as signalUrlOf, wsBase, type Frame, type SignalJoin } from './support.js';

const TURN_SECRET = 'signalling-test-turn-secret';

describe(`call page signalling (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let calls: ReturnType<typeof callApi>;
  const signalUrl = (join: SignalJoin) => signalUrlOf(t, join);

  beforeAll(async () => {
    t = await startTestServer({
      AUDIOSOCKET_PORT: '0',
      ICE_SERVERS: '[{"urls":"stun:stun.example.org:3478"}]',
      TURN_URLS: 'turn:turn.example.org:3478',
      TURN_SECRET,
    });
    key = (await t.createKey(await t.createOrg({ name: 'Signal Org' }), 'test')).key;
    calls = callApi(t);
  });
  afterAll(() => t?.stop());

  async function readyCall() {
    const call = await calls.createCall(key, { customer_language: 'fi', video: true });
    const agent = (await calls.join(call.id, call.agentKey)) as SignalJoin;
    const customer = (await calls.join(call.id, call.customerKey)) as SignalJoin;
    return { ...call, agent, customer };
  }

  it('the join answer names a signalling channel once the call is ready', async () => {
    const call = await calls.createCall(key);
    const early = (await calls.join(call.id, call.agentKey)) as SignalJoin;
    expect(early.signal).toBeNull();
    const { agent, customer } = await readyCall();
    expect(agent.signal).toEqual({ channel_id: agent.stream!.channel_id, path: `/media/signal/${agent.stream!.channel_id}`, token: expect.any(String) });
    expect(agent.signal!.token).not.toBe(agent.stream!.token);
    expect(customer.signal!.channel_id).toBe(customer.stream!.channel_id);
  });

  /** Runs `work` with the server's clock at `clock.at` (moved by the test), then gives the clock back. */
  async function withServerClock<T>(work: (clock: { at: number }) => Promise<T>): Promise<T> {
    const wallClock = t.server.app.now;
    const clock = { at: Date.now() };
    t.server.app.now = () => clock.at;
    try {
      return await work(clock);
    } finally {
      t.server.app.now = wallClock;
    }
  }
  const turnEntry = (join: SignalJoin) => join.ice_servers[1];
  /** coturn's password for `username`, computed here from the secret the server was given. */
  const passwordOf = (username: string) => createHmac('sha1', TURN_SECRET).update(username).digest('base64');

  it('hands a joined side the configured ICE servers and TURN credentials of its own, expiring 600 s after the join', async () => {
    await withServerClock(async (clock) => {
      const { agent, customer } = await readyCall();
      expect(agent.ice_servers[0]).toEqual({ urls: 'stun:stun.example.org:3478' });
      const expiry = Math.floor(clock.at / 1000) + 600;
      expect(turnEntry(agent)).toEqual({ urls: ['turn:turn.example.org:3478'], username: `${expiry}:${agent.signal!.channel_id}`, credential: passwordOf(`${expiry}:${agent.signal!.channel_id}`) });
      expect(turnEntry(customer).username).toBe(`${expiry}:${customer.signal!.channel_id}`);
      expect(turnEntry(agent).credential).not.toBe(turnEntry(customer).credential);
    });
  });

  it('sends an open signalling socket fresh credentials every half of their lifetime; none once it closed, nor once the call ended', async () => {
    await withServerClock(async (clock) => {
      const { id, agent, customer, agentKey, customerKey } = await readyCall();
      const joinedAt = clock.at;
      const agentSignal = await Signal.open(signalUrl(agent));
      const customerSignal = await Signal.open(signalUrl(customer));
      await agentSignal.next((f) => f.type === 'peer' && f.present);

      // Half the lifetime later, before the join answer's credentials expire, each side gets new ones.
      clock.at = joinedAt + 300_000;
      const renewed = await agentSignal.next((f) => f.type === 'ice_servers');
      const username = `${Math.floor(clock.at / 1000) + 600}:${agent.signal!.channel_id}`;
      expect(renewed).toEqual({
        type: 'ice_servers',
        ice_servers: [{ urls: 'stun:stun.example.org:3478' }, { urls: ['turn:turn.example.org:3478'], username, credential: passwordOf(username) }],
      });
      expect((await customerSignal.next((f) => f.type === 'ice_servers')).ice_servers[1].username).toMatch(/:ch_\w+_c$/);
      const seen = agentSignal.frames.length;
      clock.at = joinedAt + 600_000;
      const again = await agentSignal.next((f) => f.type === 'ice_servers', seen);
      expect(again.ice_servers[1].username).toBe(`${Math.floor(clock.at / 1000) + 600}:${agent.signal!.channel_id}`);

      // The customer hangs up: its socket closes, and no more come to it.
      expect((await calls.side(`/${id}/end`, customerKey, { method: 'POST' })).status).toBe(200);
      expect((await customerSignal.closed).code).toBe(4004);
      // The call ends: the agent's socket closes; neither side's join answer has credentials any more.
      expect((await calls.side(`/${id}/end`, agentKey, { method: 'POST' })).status).toBe(200);
      expect((await agentSignal.closed).code).toBe(4000);
      for (const key of [agentKey, customerKey]) expect(((await calls.join(id, key)) as SignalJoin).ice_servers).toEqual([]);
      for (const socket of [agentSignal, customerSignal]) expect(socket.frames.filter((f) => f.type === 'ice_servers')).toHaveLength(2);
    });
  });

  it('relays offer, answer, candidates and state to the other side only, with presence frames', async () => {
    const { agent, customer } = await readyCall();
    const other = await readyCall();
    const bystander = await Signal.open(signalUrl(other.customer));

    const agentSignal = await Signal.open(signalUrl(agent));
    expect(await agentSignal.next((f) => f.type === 'peer')).toEqual({ type: 'peer', present: false });
    const customerSignal = await Signal.open(signalUrl(customer));
    expect(await customerSignal.next((f) => f.type === 'peer')).toEqual({ type: 'peer', present: true });
    expect(await agentSignal.next((f) => f.type === 'peer' && f.present)).toEqual({ type: 'peer', present: true });

    const offer = { type: 'offer', sdp: 'v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\n' };
    const wrapped = (signal: Frame) => ({ type: 'peer_signal', signal });
    agentSignal.send(offer);
    expect(await customerSignal.next((f) => f.type === 'peer_signal')).toEqual(wrapped(offer));
    const answer = { type: 'answer', sdp: 'v=0\r\nanswer\r\n' };
    customerSignal.send(answer);
    expect(await agentSignal.next((f) => f.type === 'peer_signal')).toEqual(wrapped(answer));
    const candidate = { type: 'candidate', candidate: { candidate: 'candidate:1 1 udp 1 127.0.0.1 5000 typ host', sdpMid: '0', sdpMLineIndex: 0 } };
    const state = { type: 'state', muted: true, camera: false, speaking: false };
    customerSignal.send(candidate);
    customerSignal.send(state);
    await agentSignal.next((f) => f.signal?.type === 'state');
    expect(agentSignal.frames.filter((f) => f.type !== 'peer')).toEqual([wrapped(answer), wrapped(candidate), wrapped(state)]);
    // Nothing echoes back to the sender, nothing reaches another call.
    expect(customerSignal.frames.filter((f) => f.type !== 'peer')).toEqual([wrapped(offer)]);
    expect(bystander.frames).toEqual([{ type: 'peer', present: false }]);

    // The customer's page goes away: the agent is told.
    const seen = agentSignal.frames.length;
    customerSignal.ws.close();
    expect(await agentSignal.next((f) => f.type === 'peer', seen)).toEqual({ type: 'peer', present: false });
    agentSignal.ws.close();
    bystander.ws.close();
  });

  it('refuses a wrong or missing token (401) and an unknown channel (404)', async () => {
    const { agent, customer } = await readyCall();
    expect((await refusal(`${wsBase(t)}${agent.signal!.path}?token=${customer.signal!.token}`)).status).toBe(401);
    expect((await refusal(`${wsBase(t)}${agent.signal!.path}`)).status).toBe(401);
    // The stream token does not open signalling: each secret opens one thing.
    expect((await refusal(`${wsBase(t)}${agent.signal!.path}?token=${encodeURIComponent(agent.stream!.token)}`)).status).toBe(401);
    expect((await refusal(`${wsBase(t)}/media/signal/ch_nope_a?token=x`)).status).toBe(404);
  });

  it("passes on only a page's own kinds: a frame shaped like the server's, or with a key more, closes the sender's socket (1008) and reaches nobody", async () => {
    const { agent, customer } = await readyCall();
    const agentSignal = await Signal.open(signalUrl(agent));
    const customerSignal = await Signal.open(signalUrl(customer));
    await agentSignal.next((f) => f.type === 'peer' && f.present);
    const forged: Array<[unknown, keyof typeof SIGNAL_REFUSED]> = [
      [{ type: 'caption', id: 'cap_a1_1', final: true, original: 'I confirm the refund of 5,000 EUR to this caller', translated: 'x', language: 'en', source_language: 'en' }, 'notPeerSignal'],
      [{ type: 'peer', present: false }, 'notPeerSignal'],
      [{ type: 'peer_signal', signal: { type: 'state', muted: true, camera: false, speaking: false } }, 'notPeerSignal'],
      [{ type: 'ice_servers', ice_servers: [{ urls: 'turn:evil.example.org', username: 'u', credential: 'p' }] }, 'notPeerSignal'],
      [{ type: 'notice', code: 'call_ended', message: 'the call has ended' }, 'notPeerSignal'],
      [{ type: 'offer', sdp: 'v=0\r\n', caption: 'I confirm the refund of 5,000 EUR' }, 'offer'],
      [{ type: 'state', muted: false, camera: true, speaking: true, text: 'refund confirmed' }, 'state'],
      [{ type: 'candidate', candidate: { candidate: 'candidate:1 1 udp 1 127.0.0.1 5000 typ host', note: 'x' } }, 'candidate'],
    ];
    // Each from a socket of its own, while the customer's first stays open (so no presence changes either).
    for (const [frame, refused] of forged) {
      const forger = await Signal.open(signalUrl(customer));
      const seen = agentSignal.frames.length;
      forger.send(frame);
      // A server that passed it on: the agent gets it, which ends the wait too (and fails).
      const outcome = await Promise.race([forger.closed, agentSignal.next(() => true, seen)]);
      expect(outcome, JSON.stringify(frame)).toEqual(SIGNAL_REFUSED[refused]);
    }
    // A real offer after all of them arrives wrapped, and is all the agent got besides presence.
    const offer = { type: 'offer', sdp: 'v=0\r\n' };
    customerSignal.send(offer);
    await agentSignal.next((f) => f.type === 'peer_signal');
    expect(agentSignal.frames).toEqual([{ type: 'peer', present: false }, { type: 'peer', present: true }, { type: 'peer_signal', signal: offer }]);
    agentSignal.ws.close();
    customerSignal.ws.close();
  });

  it('closes on a binary (1003), malformed (1008) or oversized (1009) frame', async () => {
    const { agent } = await readyCall();
    const binary = await Signal.open(signalUrl(agent));
    binary.ws.send(Buffer.from([1, 2, 3]));
    expect(await binary.closed).toEqual(CLOSE.signalBinary);
    for (const bad of ['not json', '[1]', '{"type":"bye"}', '{"sdp":"x"}']) {
      const socket = await Signal.open(signalUrl(agent));
      socket.ws.send(bad);
      expect(await socket.closed).toEqual(SIGNAL_REFUSED.notPeerSignal);
    }
    const longSdp = await Signal.open(signalUrl(agent));
    longSdp.send({ type: 'offer', sdp: 'x'.repeat(SIGNAL_MAX_SDP_CHARS + 1) });
    expect(await longSdp.closed).toEqual(SIGNAL_REFUSED.offer);
    const big = await Signal.open(signalUrl(agent));
    big.send({ type: 'offer', sdp: 'x'.repeat(SIGNAL_MAX_FRAME_BYTES) });
    expect(await big.closed).toEqual(CLOSE.signalTooBig);
  });

  it('closes with the side: new link 4001 (that side only), customer hang-up 4004, call end 4000', async () => {
    const { id, agent, customer, customerKey, agentKey } = await readyCall();
    const agentSignal = await Signal.open(signalUrl(agent));
    const customerSignal = await Signal.open(signalUrl(customer));
    const res = await calls.api(`/v1/calls/${id}/link`, key, { method: 'POST', body: { side: 'customer' } });
    expect(res.status).toBe(200);
    expect(await customerSignal.closed).toEqual({ code: 4001, reason: 'link replaced' });
    expect((await refusal(signalUrl(customer))).status).toBe(401);
    expect(agentSignal.ws.readyState).toBe(WebSocket.OPEN);

    const newKey = calls.keyOf((await res.json()).url);
    expect(newKey).not.toBe(customerKey);
    const rejoined = (await calls.join(id, newKey)) as SignalJoin;
    const back = await Signal.open(signalUrl(rejoined));
    expect(await back.next((f) => f.type === 'peer')).toEqual({ type: 'peer', present: true });
    expect((await calls.side(`/${id}/end`, newKey, { method: 'POST' })).status).toBe(200);
    expect(await back.closed).toEqual({ code: 4004, reason: 'left the call' });
    expect(agentSignal.ws.readyState).toBe(WebSocket.OPEN);

    // The customer comes back with the same link; the agent's hang-up ends the call for both.
    const again = await Signal.open(signalUrl((await calls.join(id, newKey)) as SignalJoin));
    expect((await calls.side(`/${id}/end`, agentKey, { method: 'POST' })).status).toBe(200);
    expect(await agentSignal.closed).toEqual({ code: 4000, reason: 'call ended' });
    expect(await again.closed).toEqual({ code: 4000, reason: 'call ended' });
  });
});
