// Several instances of one deployment (docs/several-instances.md): two in-process servers on one PostgreSQL database
// and one Redis act as one for events, rate limits and a call's media, and run housekeeping once
// between them; a call outlives the instance holding its room, stopped or killed (a child process);
// with Redis gone a request is still answered. PGlite serves one process and says so when REDIS_URL is set.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MULAW_SILENCE, mulawToPcm16, pcm16ToMulaw } from '../../src/calls/media/audio/mulaw.js';
import { Downsampler24kTo8k, Upsampler8kTo24k } from '../../src/calls/media/audio/pcm.js';
import type { InterpreterFactory } from '../../src/calls/media/interpreter.js';
import { SIGNAL_REFUSED } from '../../src/calls/media/protocol.js';
import { announceOverdueTranscripts, TRANSCRIPT_READY_GRACE_MS } from '../../src/calls/transcripts.js';
import { runHousekeeping } from '../../src/deployment/housekeeping.js';
import { callApi, connect, Listener, listenUrl, pattern, Pbx, Signal, signalUrl, sine, streamAudio, streamUrl, whenClosed, wsBase, type SignalJoin } from '../media/support.js';
import { waitUntil } from '../support/waiting.js';
import { FRAME_BYTES, TwilioClient } from '../media/twilioClient.js';
import { startChildServer } from '../support/childServer.js';
import { backendName } from '../support/databases.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { startAnotherInstance, startTestServer, TEST_ADMIN_TOKEN, TEST_SECRETS_KEY, type TestServer } from '../support/testServer.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * A Redis command waits up to a minute: on a loaded machine a server's event loop may be busy longer
 * than the 2 s default while a reply waits, which is not Redis being away (a Redis that is away fails
 * commands at once, whatever this is).
 */
const REDIS_COMMAND_TIMEOUT_MS = '60000';

/**
 * The bytes of audio that are not the silence byte. A phone is paced in real time: when the echo comes
 * late (a loaded machine), a partial frame leaves padded with silence rather than wait, so what a phone
 * hears is the echo, in order, with silence possibly between: compared without it.
 */
const audible = (audio: Buffer, silence: number) => Buffer.from(audio.filter((byte) => byte !== silence));

/** An open event stream and the events it has received so far, by type. */
async function openStream(url: string, key: string) {
  const res = await fetch(`${url}/v1/events`, { headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' } });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let text = '';
  /** Reads until `done`; fails (instead of waiting for ever) when the stream stays quiet for 15 s. */
  const readUntil = async (done: () => boolean) => {
    while (!done()) {
      let quiet: NodeJS.Timeout | undefined;
      const silence = new Promise<never>((_, reject) => {
        quiet = setTimeout(() => reject(new Error(`the stream stayed quiet; it had:\n${text}`)), 15_000);
      });
      try {
        const { value, done: ended } = await Promise.race([reader.read(), silence]);
        if (ended) throw new Error(`the stream ended; it had:\n${text}`);
        text += new TextDecoder().decode(value);
      } finally {
        clearTimeout(quiet);
      }
    }
  };
  await readUntil(() => text.includes(': connected\n\n'));
  return {
    /** Waits until `count` events of `type` have come, then answers their ids. */
    async received(type: string, count: number): Promise<string[]> {
      const ids = () => [...text.matchAll(new RegExp(`id: (evt_\\w+)\\nevent: ${type.replace('.', '\\.')}\\n`, 'g'))].map((m) => m[1]!);
      await readUntil(() => ids().length >= count);
      return ids();
    },
    close: () => reader.cancel(),
  };
}

/** The media bridge's counters of an instance (relays, direct links, payloads sent on links and through Redis). */
const bridge = (t: TestServer) => t.server.media.stats().transports.bridge;

/**
 * What one turn of an instance's event loop sends another is one batch: [0x03], then each message as
 * [its length: 4 bytes, big-endian][it]; audio messages are [0x01 in, 0x02 out][relay id length][relay id][the bytes, as they are].
 */
function unbatched(message: Buffer): Buffer[] {
  if (message[0] !== 0x03) return [message];
  const parts: Buffer[] = [];
  for (let at = 1; at < message.length; at += 4 + message.readUInt32BE(at)) parts.push(message.subarray(at + 4, at + 4 + message.readUInt32BE(at)));
  return parts;
}

/** What the instances of a deployment publish to each other on their media channels, as bytes. */
async function watchMediaChannels(prefix: string) {
  const wire = new Redis(REDIS_URL);
  const fence = new Redis(REDIS_URL);
  const published: Array<{ channel: string; message: Buffer }> = [];
  wire.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, message: Buffer) => published.push({ channel: channel.toString(), message }));
  await wire.psubscribe(`${prefix}media:*`);
  const fenceChannel = `${prefix}media:fence`;
  return {
    published,
    /** Redis handed the watcher every message published so far: it hands one published after them. */
    async settled() {
      await fence.publish(fenceChannel, 'fence');
      await waitUntil(() => published.some(({ channel }) => channel === fenceChannel), 'what crossed Redis');
      published.splice(published.findIndex(({ channel }) => channel === fenceChannel), 1);
    },
    close() {
      wire.disconnect();
      fence.disconnect();
    },
  };
}

describe.skipIf(backendName !== 'postgres')('two instances on one PostgreSQL and one Redis', () => {
  let first: TestServer;
  let second: TestServer;
  // Leases renewed every half second: a dead instance is known within 1.5 s.
  const env = { REDIS_URL, REDIS_COMMAND_TIMEOUT_MS, REDIS_PREFIX: `test-${randomBytes(4).toString('hex')}:`, RATE_LIMIT_PER_MINUTE: '6', INSTANCE_HEARTBEAT_MS: '1000' };
  beforeAll(async () => {
    first = await startTestServer(env);
    second = await startAnotherInstance(first, env);
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('an event made on one instance reaches the streams of both, each exactly once', async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    const { key: streamKey } = await first.createKey(orgId, 'test'); // the rate limit of 6 is per key
    const onFirst = await openStream(first.url, streamKey);
    const onSecond = await openStream(second.url, streamKey);

    const made = [];
    for (const instance of [first, second, first]) {
      const res = await fetch(`${instance.url}/v1/sessions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ agent_language: 'en' }),
      });
      expect(res.status).toBe(201);
      made.push((await res.json()).id);
    }
    const stored = await first.server.app.db('events').where({ org_id: orgId, type: 'session.created' }).orderBy('seq').select('id');
    const ids = stored.map((row) => row.id);
    expect(ids).toHaveLength(3);
    expect(await onFirst.received('session.created', 3)).toEqual(ids);
    expect(await onSecond.received('session.created', 3)).toEqual(ids);

    // Nothing more comes: one more event, and each stream has it once after the three.
    await fetch(`${second.url}/v1/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_language: 'en' }),
    });
    expect(await onFirst.received('session.created', 4)).toHaveLength(4);
    expect(await onSecond.received('session.created', 4)).toHaveLength(4);
    await onFirst.close();
    await onSecond.close();
  });

  it("a call ended through one instance closes that call's media sockets on the other", async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    const call = await callApi(first).createCall(key, { customer_language: 'es' });
    const onSecond = callApi(second);
    const mic = await connect(streamUrl(second, await onSecond.join(call.id, call.agentKey)));
    const closed = whenClosed(mic);
    expect((await callApi(first).api(`/v1/calls/${call.id}/end`, key, { method: 'POST' })).status).toBe(200);
    expect(await closed).toEqual({ code: 4000, reason: 'call ended' });
  });

  it("a side's sockets on two instances meet in one room: the listen socket on the other instance hears the voice (test mode)", async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    const call = await callApi(first).createCall(key, { customer_language: 'es' });
    const onFirst = await callApi(first).join(call.id, call.agentKey);
    const mic = await connect(streamUrl(first, onFirst)); // the room is made on the first instance
    await waitUntil(() => first.server.media.room(call.id) !== undefined, 'the room on the first instance');
    const before = second.server.media.stats().transports.bridge.relaysOpened;
    const ear = await Listener.open(listenUrl(second, await callApi(second).join(call.id, call.agentKey)));
    await waitUntil(() => first.server.media.room(call.id)!.stats().endpoints.listen === 1, 'the listener relayed into the room');
    expect(second.server.media.room(call.id)).toBeUndefined();
    expect(second.server.media.stats().transports.bridge.relaysOpened).toBe(before + 1);

    const voice = pattern(9_600, 5);
    await streamAudio(mic, voice, 960, 1);
    expect((await ear.waitForBytes(voice.length)).equals(voice)).toBe(true);
    expect(ear.frames.find((frame) => frame.type === 'provenance')).toMatchObject({ engine: 'test' });

    // Ended through the instance without the room: both sockets close as the call ended.
    const micClosed = whenClosed(mic);
    expect((await callApi(second).api(`/v1/calls/${call.id}/end`, key, { method: 'POST' })).status).toBe(200);
    expect(await micClosed).toEqual({ code: 4000, reason: 'call ended' });
    expect(await ear.closed).toEqual({ code: 4000, reason: 'call ended' });
  });

  it('relayed audio goes straight to the other instance on a link of their own, both ways, in order; none of it crosses Redis (test mode)', async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    const call = await callApi(first).createCall(key, { customer_language: 'es' });
    const ear = await Listener.open(listenUrl(first, await callApi(first).join(call.id, call.agentKey))); // the room is made on the first instance
    await waitUntil(() => first.server.media.room(call.id) !== undefined, 'the room on the first instance');
    const watcher = await watchMediaChannels(env.REDIS_PREFIX);
    try {
      const onSecond = await callApi(second).join(call.id, call.agentKey);
      const relayedEar = await Listener.open(listenUrl(second, onSecond));
      const relayedMic = await connect(streamUrl(second, onSecond));
      const inRoom = () => first.server.media.room(call.id)!.stats();
      await waitUntil(() => inRoom().endpoints.listen === 2 && inRoom().endpoints.stream === 1, 'the relayed sockets in the room');
      // Each instance dials the other once it has something for it (the relays' opening, the listener's greeting).
      await waitUntil(() => bridge(first).linksOpen === 1 && bridge(second).linksOpen === 1, 'a link each way');
      const sentBefore = [bridge(first).sentOnLinks, bridge(second).sentOnLinks];
      watcher.published.splice(0);

      // In on the second's link, out on the first's: every byte, in order, on both listen sockets.
      const voice = pattern(9_600, 5);
      await streamAudio(relayedMic, voice, 960, 1);
      expect((await ear.waitForBytes(voice.length)).equals(voice)).toBe(true);
      expect((await relayedEar.waitForBytes(voice.length)).equals(voice)).toBe(true);
      expect(bridge(second).sentOnLinks).toBeGreaterThan(sentBefore[1]!);
      expect(bridge(first).sentOnLinks).toBeGreaterThan(sentBefore[0]!);
      await watcher.settled();
      expect(watcher.published.flatMap(({ message }) => unbatched(message)).filter((message) => message[0] === 0x01 || message[0] === 0x02)).toEqual([]);
      for (const ws of [relayedMic, relayedEar.ws, ear.ws]) ws.close();
    } finally {
      watcher.close();
    }
  });

  it("an AudioSocket line that reaches the other instance is relayed to the call's room: audio both ways (test mode)", async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    const calls = callApi(first);
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const line = await (await calls.api(`/v1/calls/${call.id}/phone-line`, key, { method: 'POST', body: { side: 'customer' } })).json();
    // The customer's listen socket makes the room on the first instance.
    const ear = await Listener.open(listenUrl(first, await calls.join(call.id, call.customerKey)));
    await waitUntil(() => first.server.media.room(call.id) !== undefined, 'the room on the first instance');
    const pbx = await Pbx.connect(second.server.ports.audiosocket!);
    pbx.sendUuid(line.audiosocket_id);
    await waitUntil(() => first.server.media.room(call.id)!.stats().endpoints.line === 1, 'the line relayed into the room');
    expect(second.server.media.room(call.id)).toBeUndefined();

    const voice = sine(3_200, 8_000, 400); // 0.4 s at 8 kHz, sent at once (the pacing is the server's)
    for (let offset = 0; offset < voice.length; offset += 320) pbx.send(0x10, voice.subarray(offset, offset + 320));
    // In: the room hears the phone (its side's listen socket, at 24 kHz) ...
    const wide = new Upsampler8kTo24k().process(voice);
    expect((await ear.waitForBytes(wide.length)).subarray(0, wide.length).equals(wide)).toBe(true);
    // ... and out: the phone hears what its side hears (its own voice), back at 8 kHz in 320-byte frames.
    const expected = audible(new Downsampler24kTo8k().process(wide).subarray(0, voice.length - 320), 0x00);
    const heardOnLine = () => audible(Buffer.concat(pbx.audio().map((frame) => frame.payload)), 0x00);
    await waitUntil(() => heardOnLine().length >= expected.length, 'the echo on the line');
    expect(heardOnLine().subarray(0, expected.length).equals(expected)).toBe(true);
    pbx.send(0x00);
    await pbx.ended;
    await waitUntil(() => (first.server.media.room(call.id)!.stats().endpoints.line ?? 0) === 0, 'the line to leave the room');
    ear.close();
  });

  it("a Twilio media stream that reaches the other instance is relayed to the call's room: audio both ways (test mode)", async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    const calls = callApi(first);
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const customer = await calls.join(call.id, call.customerKey);
    const ear = await Listener.open(listenUrl(first, customer));
    await waitUntil(() => first.server.media.room(call.id) !== undefined, 'the room on the first instance');
    const relays = second.server.media.stats().transports.bridge.relaysOpened;
    const phone = await TwilioClient.open(`${wsBase(second)}/media/twilio/${customer.stream!.channel_id}`);
    phone.start({ token: customer.stream!.token });
    await waitUntil(() => second.server.media.stats().transports.twilio.streams === 1, 'the stream admitted');

    const voice = pcm16ToMulaw(sine(3_200, 8_000, 300)); // 0.4 s of 8 kHz mu-law
    phone.media(voice);
    const wide = new Upsampler8kTo24k().process(mulawToPcm16(voice));
    expect((await ear.waitForBytes(wide.length)).subarray(0, wide.length).equals(wide)).toBe(true);
    const expected = audible(pcm16ToMulaw(new Downsampler24kTo8k().process(wide)).subarray(0, voice.length - FRAME_BYTES), MULAW_SILENCE);
    await waitUntil(() => audible(phone.audio(), MULAW_SILENCE).length >= expected.length, 'the echo on the phone');
    expect(audible(phone.audio(), MULAW_SILENCE).subarray(0, expected.length).equals(expected)).toBe(true);
    expect(second.server.media.room(call.id)).toBeUndefined();
    expect(second.server.media.stats().transports.bridge.relaysOpened).toBe(relays + 1);

    // Ended through the room's instance: the stream on the other closes as the call ended.
    expect((await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST' })).status).toBe(200);
    expect(await phone.closed).toEqual({ code: 4000, reason: 'call ended' });
    expect(await ear.closed).toEqual({ code: 4000, reason: 'call ended' });
  });

  it('an agent on one instance and a customer on the other hear each other interpreted (live mode)', async () => {
    // The interpreter "translates" by negating the samples; whichever instance holds the room uses it.
    const negate = (pcm: Buffer) => {
      const out = Buffer.alloc(pcm.length);
      for (let i = 0; i + 1 < pcm.length; i += 2) out.writeInt16LE(Math.max(-32768, Math.min(32767, -pcm.readInt16LE(i))), i);
      return out;
    };
    const fake: InterpreterFactory = (opts) => {
      opts.onStatus({ state: 'connected' });
      return { provenance: { engine: 'fake', model: 'negate' }, push: (pcm) => opts.onAudio(negate(pcm)), close: async () => {} };
    };
    for (const instance of [first, second]) instance.server.app.engines.replaceLive({ interpretation: fake });
    const orgId = await first.createOrg({ balance: 10 });
    const { key } = await first.createKey(orgId, 'live');
    const call = await callApi(first).createCall(key, { customer_language: 'fi' });
    const agent = await callApi(first).join(call.id, call.agentKey);
    const customer = await callApi(second).join(call.id, call.customerKey);
    const agentHears = await Listener.open(listenUrl(first, agent));
    const customerHears = await Listener.open(listenUrl(second, customer));
    const agentMic = await connect(streamUrl(first, agent));
    const customerMic = await connect(streamUrl(second, customer));
    await waitUntil(() => first.server.media.room(call.id)?.stats().endpoints.stream === 2, 'both voices in the one room');

    const agentVoice = pattern(9_600, 100);
    const customerVoice = pattern(4_800, 20_000);
    await streamAudio(agentMic, agentVoice, 960, 1);
    await streamAudio(customerMic, customerVoice, 960, 1);
    expect((await customerHears.waitForBytes(agentVoice.length)).equals(negate(agentVoice))).toBe(true);
    expect((await agentHears.waitForBytes(customerVoice.length)).equals(negate(customerVoice))).toBe(true);
    expect(customerHears.frames.find((frame) => frame.type === 'provenance')).toEqual({ type: 'provenance', engine: 'fake', model: 'negate' });
    for (const ws of [agentMic, customerMic, agentHears.ws, customerHears.ws]) ws.close();
  });

  describe("the call page's signalling sockets on two instances meet in the signalling of the call's room", () => {
    const presence = (present: boolean) => JSON.stringify({ type: 'peer', present });
    // As a page writes them (spacing, escapes, non-ASCII text); each arrives once, checked and written
    // anew in its envelope, whichever instance checked it.
    const offer = '{"type":"offer",  "sdp":"v=0\\r\\no=- 1 2 IN IP4 127.0.0.1\\r\\ns=caf\u00e9 \\u00e9\\r\\n"}';
    const answer = '{ "type": "answer", "sdp": "v=0\\r\\ns=r\u00e9ponse\\r\\n" }';
    const relayed = (sent: string) => JSON.stringify({ type: 'peer_signal', signal: JSON.parse(sent) });

    async function videoCall() {
      const { key } = await first.createKey(await first.createOrg(), 'test');
      const call = await callApi(first).createCall(key, { customer_language: 'fi', video: true });
      const agent = (await callApi(first).join(call.id, call.agentKey)) as SignalJoin;
      const customer = (await callApi(first).join(call.id, call.customerKey)) as SignalJoin;
      return { id: call.id, agent, customer };
    }

    it("the room with the agent's socket: presence, an offer and its answer in their envelopes, a side gone, a bad frame", async () => {
      const call = await videoCall();
      const agent = await Signal.open(signalUrl(first, call.agent)); // the room is made on the first instance
      expect(await agent.next((f) => f.type === 'peer')).toEqual({ type: 'peer', present: false });
      const relays = second.server.media.stats().transports.bridge.relaysOpened;
      const customer = await Signal.open(signalUrl(second, call.customer));
      // Sent at once, before its instance knows where the room is: it waits, and arrives once.
      const state = '{"type":"state","muted":false,"camera":true,"speaking":false}';
      customer.ws.send(state);
      await agent.next((f) => f.signal?.type === 'state');
      expect(second.server.media.room(call.id)).toBeUndefined();
      expect(first.server.media.room(call.id)).toBeDefined();
      expect(second.server.media.stats().transports.bridge.relaysOpened).toBe(relays + 1);

      agent.ws.send(offer);
      await customer.next((f) => f.signal?.type === 'offer');
      customer.ws.send(answer);
      await agent.next((f) => f.signal?.type === 'answer');
      // Each frame once, in its envelope; presence once per change.
      expect(agent.texts).toEqual([presence(false), presence(true), relayed(state), relayed(answer)]);
      expect(customer.texts).toEqual([presence(true), relayed(offer)]);

      // The customer's page goes away: the agent is told.
      customer.ws.close();
      expect(await agent.next((f) => f.type === 'peer', 4)).toEqual({ type: 'peer', present: false });

      // Back on the second instance; a frame a page may not send closes its socket there and reaches nobody.
      const again = await Signal.open(signalUrl(second, call.customer));
      expect(await again.next((f) => f.type === 'peer')).toEqual({ type: 'peer', present: true });
      await agent.next((f) => f.type === 'peer' && f.present, 5);
      const seen = agent.texts.length;
      again.ws.send('{"type":"bye","sdp":"v=0"}');
      expect(await again.closed).toEqual(SIGNAL_REFUSED.notPeerSignal);
      await agent.next((f) => f.type === 'peer', seen);
      expect(agent.texts.slice(seen)).toEqual([presence(false)]);
      agent.ws.close();
    });

    it("the room with the customer's socket on the other instance: the agent's relayed socket negotiates, and its close is told", async () => {
      const call = await videoCall();
      const customer = await Signal.open(signalUrl(second, call.customer)); // the room is made on the second instance
      expect(await customer.next((f) => f.type === 'peer')).toEqual({ type: 'peer', present: false });
      const agent = await Signal.open(signalUrl(first, call.agent));
      expect(await agent.next((f) => f.type === 'peer')).toEqual({ type: 'peer', present: true });
      await customer.next((f) => f.type === 'peer' && f.present);
      expect(first.server.media.room(call.id)).toBeUndefined();

      agent.ws.send(offer);
      await customer.next((f) => f.signal?.type === 'offer');
      customer.ws.send(answer);
      await agent.next((f) => f.signal?.type === 'answer');
      expect(customer.texts).toEqual([presence(false), presence(true), relayed(offer)]);
      expect(agent.texts).toEqual([presence(true), relayed(answer)]);

      agent.ws.close();
      expect(await customer.next((f) => f.type === 'peer', 3)).toEqual({ type: 'peer', present: false });
      customer.ws.close();
    });

    it('both sockets relayed to the room on the other instance: each frame arrives once', async () => {
      const call = await videoCall();
      const ear = await Listener.open(listenUrl(first, call.agent)); // the room is made on the first instance
      await waitUntil(() => first.server.media.room(call.id) !== undefined, 'the room on the first instance');
      const agent = await Signal.open(signalUrl(second, call.agent));
      expect(await agent.next((f) => f.type === 'peer')).toEqual({ type: 'peer', present: false });
      const customer = await Signal.open(signalUrl(second, call.customer));
      expect(await customer.next((f) => f.type === 'peer')).toEqual({ type: 'peer', present: true });
      await agent.next((f) => f.type === 'peer' && f.present);
      expect(second.server.media.room(call.id)).toBeUndefined();

      agent.ws.send(offer);
      await customer.next((f) => f.signal?.type === 'offer');
      customer.ws.send(answer);
      await agent.next((f) => f.signal?.type === 'answer');
      expect(customer.texts).toEqual([presence(true), relayed(offer)]);
      expect(agent.texts).toEqual([presence(false), presence(true), relayed(answer)]);
      for (const ws of [agent.ws, customer.ws, ear.ws]) ws.close();
    });
  });

  it('lets go of endpoints relayed from an instance that died without saying so', async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    const call = await callApi(first).createCall(key, { customer_language: 'es' });
    const mic = await connect(streamUrl(first, await callApi(first).join(call.id, call.agentKey)));
    await waitUntil(() => first.server.media.room(call.id) !== undefined, 'the room on the first instance');
    const room = first.server.media.room(call.id)!;
    // The room is watched as the listener enters: a renewal may take it out again before a poll would see it.
    const listenersOnEntry = new Promise<number>((resolve) => {
      const add = room.add.bind(room);
      vi.spyOn(room, 'add').mockImplementation((endpoint) => {
        const feed = add(endpoint);
        resolve(room.stats().endpoints.listen ?? 0);
        return feed;
      });
    });
    // An instance that has no lease (it died) relays a listener into the room, as its bridge would.
    const redis = new Redis(REDIS_URL);
    try {
      const open = { op: 'open', relay: 'ghost.1', from: 'ghost', call: call.id, endpoint: { side: 'agent', credential: 'link', kind: 'listen', format: 'wav' } };
      await redis.publish(`${env.REDIS_PREFIX}media:${first.server.app.instanceId}`, JSON.stringify(open));
      expect(await listenersOnEntry).toBe(1);
      // At its next renewal the room's instance finds the sender's lease gone.
      await waitUntil(() => (room.stats().endpoints.listen ?? 0) === 0, 'the ghost listener gone');
    } finally {
      redis.disconnect();
      mic.close();
    }
  });

  it('a key has one rate limit across the instances', async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    const account = (instance: TestServer) => fetch(`${instance.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } });
    const statuses = [];
    for (const instance of [first, second, first, second, first, second]) statuses.push((await account(instance)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    const refused = await account(second);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await account(first)).status).toBe(429);
  });

  it('says once that a call\'s transcript is ready, counting its utterances, wherever the call ends and wherever its room was', async () => {
    const orgId = await first.createOrg();
    /** A key of its own for each call: the rate limit of 6 is per key. */
    const keyOf = new Map<string, string>();
    const newCall = async () => {
      const { key } = await first.createKey(orgId, 'test');
      const call = await calls.createCall(key, { customer_language: 'es' });
      keyOf.set(call.id, key);
      return call;
    };
    const db = first.server.app.db;
    const calls = callApi(first);
    const redis = new Redis(REDIS_URL);
    /** `seconds` of a tone, then 600 ms of silence: one turn of speech (test mode stores its placeholder). */
    const turn = (seconds: number) => Buffer.concat([sine(24_000 * seconds, 24_000, 440), Buffer.alloc(24_000 * 0.6 * 2)]);
    const ready = async (callId: string) => (await db('events').where({ call_id: callId, type: 'call.transcript.ready' })).map((row) => row.payload.data);
    const endOn = async (instance: TestServer, callId: string) => expect((await callApi(instance).api(`/v1/calls/${callId}/end`, keyOf.get(callId)!, { method: 'POST' })).status).toBe(200);
    /** A call whose agent said two turns into its room on the first instance. */
    const spoken = async () => {
      const call = await newCall();
      await calls.join(call.id, call.customerKey);
      const mic = await connect(streamUrl(first, await calls.join(call.id, call.agentKey)));
      await streamAudio(mic, Buffer.concat([turn(0.5), turn(0.5)]), 960);
      await waitUntil(async () => (await db('call_utterances').where({ call_id: call.id })).length === 2, 'two utterances stored');
      return { call, mic };
    };
    /** The room has closed on the first instance and its lease is let go: no room of the call anywhere. */
    const noRoomAnywhere = (callId: string) =>
      waitUntil(async () => first.server.media.room(callId) === undefined && (await redis.get(`${env.REDIS_PREFIX}room:${callId}`)) === null, 'no room of the call anywhere');
    try {
      // The room open on the first instance, the call ended through the second: the room's instance says it.
      const open = await spoken();
      await endOn(second, open.call.id);
      await waitUntil(async () => (await ready(open.call.id)).length === 1, 'the transcript ready');
      await noRoomAnywhere(open.call.id);
      expect(await ready(open.call.id)).toEqual([{ call_id: open.call.id, status: 'ended', utterances: 2 }]);

      // The room closed before the end, which comes through the second instance: one of the two says it at once.
      const closed = await spoken();
      closed.mic.close();
      await noRoomAnywhere(closed.call.id);
      await endOn(second, closed.call.id);
      await waitUntil(async () => (await ready(closed.call.id)).length === 1, 'the transcript ready');
      expect(await ready(closed.call.id)).toEqual([{ call_id: closed.call.id, status: 'ended', utterances: 2 }]);

      // No room ever opened.
      const never = await newCall();
      await endOn(first, never.id);
      await waitUntil(async () => (await ready(never.id)).length === 1, 'the transcript ready');
      expect(await ready(never.id)).toEqual([{ call_id: never.id, status: 'ended', utterances: 0 }]);

      // The room's instance (alive in the directory, so neither of these says it) dies before saying it:
      // housekeeping, on both instances at once, says it once.
      const orphan = await spoken();
      orphan.mic.close();
      await noRoomAnywhere(orphan.call.id);
      await redis.set(`${env.REDIS_PREFIX}instance:inst_gone`, '1', 'PX', 60_000);
      await redis.set(`${env.REDIS_PREFIX}room:${orphan.call.id}`, 'inst_gone', 'PX', 60_000);
      await endOn(second, orphan.call.id);
      await redis.del(`${env.REDIS_PREFIX}instance:inst_gone`);
      expect((await db('calls').where({ id: orphan.call.id }).first()).transcript_ready_at).toBeNull();
      const later = Date.now() + TRANSCRIPT_READY_GRACE_MS + 60_000;
      await Promise.all([first, second].map((instance) => announceOverdueTranscripts(instance.server.app, Date.now() - 60_000, later)));
      expect(await ready(orphan.call.id)).toEqual([{ call_id: orphan.call.id, status: 'ended', utterances: 2 }]);

      for (const callId of [open.call.id, closed.call.id, never.id, orphan.call.id]) expect(await ready(callId), callId).toHaveLength(1);
      open.mic.close();
    } finally {
      redis.disconnect();
    }
  });

  it('runs the housekeeping once per period between the instances', async () => {
    await first.server.app.db('job_runs').delete();
    const ran = await Promise.all([runHousekeeping(first.server.app), runHousekeeping(second.server.app)]);
    expect(ran.filter(Boolean)).toHaveLength(1);
    // Within the period neither runs it again.
    expect(await Promise.all([runHousekeeping(first.server.app), runHousekeeping(second.server.app)])).toEqual([false, false]);
    expect(await first.server.app.db('job_runs').select('name')).toEqual([{ name: 'housekeeping' }]);
  });
});

describe.skipIf(backendName !== 'postgres')('two instances without a direct link between them (MEDIA_PEER_PORT=off on one)', () => {
  let first: TestServer;
  let second: TestServer;
  const env = { REDIS_URL, REDIS_COMMAND_TIMEOUT_MS, REDIS_PREFIX: `test-${randomBytes(4).toString('hex')}:`, INSTANCE_HEARTBEAT_MS: '1000' };
  beforeAll(async () => {
    // The first would link up; the second neither listens for links nor dials: both send through Redis.
    first = await startTestServer(env);
    second = await startAnotherInstance(first, { ...env, MEDIA_PEER_PORT: 'off' });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('relayed audio crosses Redis as its own bytes behind a short header, both ways, batched (test mode)', async () => {
    const orgId = await first.createOrg();
    const { key } = await first.createKey(orgId, 'test');
    const call = await callApi(first).createCall(key, { customer_language: 'es' });
    const ear = await Listener.open(listenUrl(first, await callApi(first).join(call.id, call.agentKey))); // the room is made on the first instance
    await waitUntil(() => first.server.media.room(call.id) !== undefined, 'the room on the first instance');
    // What the instances publish to each other, as bytes.
    const watcher = await watchMediaChannels(env.REDIS_PREFIX);
    const { published } = watcher;
    try {
      const onSecond = await callApi(second).join(call.id, call.agentKey);
      const relayedEar = await Listener.open(listenUrl(second, onSecond));
      const relayedMic = await connect(streamUrl(second, onSecond));
      const inRoom = () => first.server.media.room(call.id)!.stats();
      await waitUntil(() => inRoom().endpoints.listen === 2 && inRoom().endpoints.stream === 1, 'the relayed sockets in the room');

      const voice = pattern(9_600, 5);
      await streamAudio(relayedMic, voice, 960, 1);
      expect((await ear.waitForBytes(voice.length)).equals(voice)).toBe(true);
      expect((await relayedEar.waitForBytes(voice.length)).equals(voice)).toBe(true);
      await watcher.settled();
      const audioTo = (instance: TestServer, tag: number) =>
        published
          .filter(({ channel }) => channel === `${env.REDIS_PREFIX}media:${instance.server.app.instanceId}`)
          .flatMap(({ message }) => unbatched(message))
          .filter((message) => message[0] === tag)
          .map((message) => ({ relay: message.subarray(2, 2 + message[1]!).toString(), bytes: message.subarray(2 + message[1]!) }));
      // In: each 20 ms frame of the relayed stream socket, to the room's instance, as the socket sent it.
      const frames = Array.from({ length: voice.length / 960 }, (_, i) => voice.subarray(i * 960, (i + 1) * 960));
      expect(audioTo(first, 0x01).map((m) => m.bytes)).toEqual(frames);
      // Out: each WAV chunk the relayed listen socket got, to its instance, as the socket got it.
      expect(audioTo(second, 0x02).map((m) => m.bytes)).toEqual(relayedEar.chunks);
      // Both relays are the second instance's (their ids start with its own).
      for (const { relay } of [...audioTo(first, 0x01), ...audioTo(second, 0x02)]) expect(relay.startsWith(`${second.server.app.instanceId}.`)).toBe(true);
      expect([bridge(first).linksOpen, bridge(second).linksOpen, bridge(first).sentOnLinks, bridge(second).sentOnLinks]).toEqual([0, 0, 0, 0]);
      for (const ws of [relayedMic, relayedEar.ws, ear.ws]) ws.close();
    } finally {
      watcher.close();
    }
  });

});

describe.skipIf(backendName !== 'postgres')('an instance that stops in the middle of a call', () => {
  it('leaves the call open; its sides reconnect to the other instance and carry on', async () => {
    // No grace: the instance goes at once, as one that is lost would.
    const env = { REDIS_URL, REDIS_COMMAND_TIMEOUT_MS, REDIS_PREFIX: `test-${randomBytes(4).toString('hex')}:`, SHUTDOWN_GRACE_SECONDS: '0' };
    const first = await startTestServer(env);
    const second = await startAnotherInstance(first, env);
    try {
      const orgId = await first.createOrg();
      const { key } = await first.createKey(orgId, 'test');
      const call = await callApi(first).createCall(key, { customer_language: 'es' });
      const onFirst = await callApi(first).join(call.id, call.agentKey);
      const mic = await connect(streamUrl(first, onFirst));
      await waitUntil(() => first.server.media.room(call.id) !== undefined, 'the room on the first instance');
      // A socket of the call on the other instance, relayed to the room on the first.
      const relayedEar = await Listener.open(listenUrl(second, await callApi(second).join(call.id, call.agentKey)));
      await waitUntil(() => first.server.media.room(call.id)!.stats().endpoints.listen === 1, 'the listener relayed');
      const closed = whenClosed(mic);
      await first.server.stop(); // the instance only: the database stays, shared with the other
      expect(await closed).toEqual({ code: 1001, reason: 'server shutting down' });
      expect(await relayedEar.closed).toEqual({ code: 1001, reason: 'server shutting down' });

      // The same link joins on the other instance, whose room is made anew; test mode echoes the voice.
      const onSecond = await callApi(second).join(call.id, call.agentKey);
      const ear = await Listener.open(listenUrl(second, onSecond));
      const again = await connect(streamUrl(second, onSecond));
      const voice = pattern(4_800, 9);
      again.send(voice);
      expect((await ear.waitForBytes(voice.length)).equals(voice)).toBe(true);
      expect(second.server.media.room(call.id)).toBeDefined();
      expect((await (await callApi(second).api(`/v1/calls/${call.id}`, key)).json()).status).toBe('open');
      again.close();
      ear.close();
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});

describe.skipIf(backendName !== 'postgres')('an instance that dies in the middle of a call without a word', () => {
  it("its relayed sockets end, and the call's next socket takes the room over on the other instance", async () => {
    // Leases renewed every 150 ms: a dead instance's lease lapses within half a second.
    const prefix = `test-${randomBytes(4).toString('hex')}:`;
    const env = { REDIS_URL, REDIS_COMMAND_TIMEOUT_MS, REDIS_PREFIX: prefix, INSTANCE_HEARTBEAT_MS: '300' };
    const survivor = await startTestServer(env);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lia-doomed-'));
    // The doomed instance is a real process, so that it can die as a crash does (SIGKILL).
    const doomed = await startChildServer({
      ...env,
      DATABASE_URL: survivor.server.app.config.databaseUrl!,
      SECRETS_KEY: TEST_SECRETS_KEY,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      DATA_DIR: dataDir,
      AUDIOSOCKET_PORT: '0',
    });
    const redis = new Redis(REDIS_URL);
    try {
      const { key } = await survivor.createKey(await survivor.createOrg(), 'test');
      const calls = callApi(survivor);
      const call = await calls.createCall(key, { customer_language: 'es' });
      const roomKey = `${prefix}room:${call.id}`;
      const mic = await connect(streamUrl(doomed, await callApi(doomed).join(call.id, call.agentKey)));
      await waitUntil(async () => (await redis.get(roomKey)) !== null, 'the room on the doomed instance');
      const holder = (await redis.get(roomKey))!;
      expect(holder).not.toBe(survivor.server.app.instanceId);
      // A listen socket on the survivor, relayed to that room, hears the agent's voice (test mode).
      const relayedEar = await Listener.open(listenUrl(survivor, await calls.join(call.id, call.agentKey)));
      await relayedEar.waitForFrame((frame) => frame.type === 'provenance'); // greeted: it is in the room
      const before = pattern(4_800, 3);
      mic.send(before);
      expect((await relayedEar.waitForBytes(before.length)).equals(before)).toBe(true);

      doomed.process.kill('SIGKILL');
      await doomed.exited;
      // The room's lease is renewed just after the instance's, so it names the dead holder a little
      // longer; held on here, the takeover is what the next socket must do, whatever the timing.
      await redis.pexpire(roomKey, 60_000);
      await waitUntil(async () => (await redis.exists(`${prefix}instance:${holder}`)) === 0, "the dead instance's lease to lapse");
      expect(await relayedEar.closed).toEqual({ code: 1001, reason: 'server shutting down' });

      // The side reconnects to the survivor: the room is taken over there and the call carries on.
      const again = await calls.join(call.id, call.agentKey);
      const ear = await Listener.open(listenUrl(survivor, again));
      await ear.waitForFrame((frame) => frame.type === 'provenance');
      expect(await redis.get(roomKey)).toBe(survivor.server.app.instanceId);
      expect(survivor.server.media.room(call.id)).toBeDefined();
      const newMic = await connect(streamUrl(survivor, again));
      const voice = pattern(4_800, 11);
      newMic.send(voice);
      expect((await ear.waitForBytes(voice.length)).equals(voice)).toBe(true);
      expect((await (await calls.api(`/v1/calls/${call.id}`, key)).json()).status).toBe('open');
      newMic.close();
      ear.close();
    } finally {
      redis.disconnect();
      if (doomed.process.exitCode === null && doomed.process.signalCode === null) doomed.process.kill('SIGKILL');
      await doomed.exited;
      await survivor.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(backendName !== 'postgres')('an instance whose Redis goes away', () => {
  let t: TestServer;
  let proxy: TcpProxy;
  beforeAll(async () => {
    const target = new URL(REDIS_URL);
    proxy = new TcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    await proxy.start();
    t = await startTestServer({
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      REDIS_COMMAND_TIMEOUT_MS,
      REDIS_PREFIX: `test-${randomBytes(4).toString('hex')}:`,
      RATE_LIMIT_PER_MINUTE: '3',
    });
  });
  afterAll(async () => {
    await t?.stop();
    await proxy?.kill();
  });

  it('still answers, limits on its own, and delivers its events to its own streams', async () => {
    const orgId = await t.createOrg();
    const { key } = await t.createKey(orgId, 'test');
    const { key: streamKey } = await t.createKey(orgId, 'test');
    const stream = await openStream(t.url, streamKey);
    await proxy.kill();

    const account = () => fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } });
    expect([(await account()).status, (await account()).status, (await account()).status]).toEqual([200, 200, 200]);
    expect((await account()).status).toBe(429);
    const created = await fetch(`${t.url}/v1/sessions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${streamKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_language: 'en' }),
    });
    expect(created.status).toBe(201);
    expect(await stream.received('session.created', 1)).toHaveLength(1);
    await stream.close();
  });
});

describe('REDIS_URL with the embedded database', () => {
  it.skipIf(backendName !== 'pglite')('starts as one process and says why Redis is not used', async () => {
    const lines: string[] = [];
    const t = await startTestServer({ REDIS_URL: 'redis://127.0.0.1:1' }, { logLevel: 'warn', logDestination: { write: (line: string) => lines.push(line) } });
    try {
      expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
      expect(lines.join('')).toContain('REDIS_URL is not used: the embedded database (PGlite) serves one process');
    } finally {
      await t.stop();
    }
  });
});
