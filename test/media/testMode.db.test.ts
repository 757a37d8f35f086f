import type { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAV_HEADER_BYTES, parseWavHeader } from '../../src/calls/media/audio/pcm.js';
import { CHUNK_BYTES, CLOSE, MAX_STREAM_FRAME_BYTES } from '../../src/calls/media/protocol.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { Listener, callApi, connect, heardThroughMarker, listenUrl, pattern, refusal, roundTrip, streamAudio, streamUrl, whenClosed, withServerClockStopped, wsBase } from './support.js';
import { waitUntil } from '../support/waiting.js';

describe(`media plane, test mode (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let calls: ReturnType<typeof callApi>;
  beforeAll(async () => {
    t = await startTestServer({ AUDIOSOCKET_PORT: '0' });
    key = (await t.createKey(await t.createOrg({ name: 'Media Org' }), 'test')).key;
    calls = callApi(t);
  });
  afterAll(() => t?.stop());

  /** A ready test-mode call, both sides joined. */
  async function readyCall() {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const agent = await calls.join(call.id, call.agentKey);
    const customer = await calls.join(call.id, call.customerKey);
    return { ...call, agent, customer };
  }

  it('each side hears exactly its own voice, a WAV chunk per frame as it comes, with provenance test/echo', async () => {
    const call = await calls.createCall(key);
    expect((await calls.join(call.id, call.agentKey)).ready).toBe(false);
    const customer = await calls.setLanguage(call.id, call.customerKey, 'fi');
    const agent = await calls.join(call.id, call.agentKey);
    expect(customer.ready && agent.ready).toBe(true);

    const agentHears = await Listener.open(listenUrl(t, agent));
    const customerHears = await Listener.open(listenUrl(t, customer));
    const agentMic = await connect(streamUrl(t, agent));
    const customerMic = await connect(streamUrl(t, customer));

    const agentVoice = pattern(24_000 / 2, 1_000); // 500 ms
    const customerVoice = pattern(24_000 / 2 + 240, 30_000); // 510 ms: the last frame is partial
    await Promise.all([streamAudio(agentMic, agentVoice, 960, 2), streamAudio(customerMic, customerVoice, 1_440, 2)]);

    expect((await agentHears.waitForBytes(agentVoice.length)).equals(agentVoice)).toBe(true);
    expect((await customerHears.waitForBytes(customerVoice.length)).equals(customerVoice)).toBe(true);
    for (const chunk of [...agentHears.chunks, ...customerHears.chunks]) {
      const info = parseWavHeader(chunk)!;
      expect(info).toMatchObject({ format: 1, channels: 1, sampleRate: 24_000, byteRate: 48_000, blockAlign: 2, bitsPerSample: 16 });
      expect(info.riffSize).toBe(chunk.length - 8);
      expect(info.dataBytes).toBe(chunk.length - WAV_HEADER_BYTES);
      expect(info.dataBytes).toBeLessThanOrEqual(CHUNK_BYTES);
    }
    // Nothing waits for later audio: each stream frame leaves as its own chunk.
    expect(agentHears.chunks.map((c) => c.length - WAV_HEADER_BYTES)).toEqual(Array(agentVoice.length / 960).fill(960));
    expect(customerHears.chunks.slice(0, -1).every((c) => c.length === WAV_HEADER_BYTES + 1_440)).toBe(true);
    expect(customerHears.chunks.at(-1)!.length).toBe(WAV_HEADER_BYTES + (customerVoice.length % 1_440 || 1_440));
    expect(agentHears.frames[0]).toEqual({ type: 'provenance', engine: 'test', model: 'echo' });
    expect(customerHears.frames[0]).toEqual({ type: 'provenance', engine: 'test', model: 'echo' });

    // Nothing more arrives: each heard only itself, up to a last frame each side sends.
    const marker = pattern(960, 50_000);
    expect((await heardThroughMarker(agentMic, agentHears, agentVoice.length, marker)).equals(Buffer.concat([agentVoice, marker]))).toBe(true);
    expect((await heardThroughMarker(customerMic, customerHears, customerVoice.length, marker)).equals(Buffer.concat([customerVoice, marker]))).toBe(true);

    for (const ws of [agentMic, customerMic, agentHears.ws, customerHears.ws]) ws.close();
    await waitUntil(() => t.server.media.room(call.id) === undefined, 'the room to be dropped');
  });

  it('refuses bad upgrades with an HTTP error before upgrading', async () => {
    const { id, agent, customer, agentKey } = await readyCall();
    const bad = (url: string) => refusal(url);
    // Wrong or missing token, wrong unlock (the customer's unlock does not open the customer's own channel).
    expect(await bad(streamUrl(t, agent).replace(/token=[^&]+/, 'token=nope'))).toMatchObject({ status: 401, body: { detail: expect.stringMatching(/token/) } });
    expect((await bad(`${wsBase(t)}${agent.stream!.path}`)).status).toBe(401);
    expect((await bad(`${wsBase(t)}${agent.stream!.path}?token=${customer.stream!.token}`)).status).toBe(401);
    expect((await bad(`${wsBase(t)}${agent.stream!.path}?unlock=${customer.listen!.unlock}`)).status).toBe(401);
    expect(await bad(`${wsBase(t)}${customer.stream!.path.replace('stream', 'listen')}?unlock=${customer.listen!.unlock}`)).toMatchObject({
      status: 401,
      body: { detail: expect.stringMatching(/unlock/) },
    });
    // Unknown channel, unknown call, unknown endpoint.
    expect((await bad(`${wsBase(t)}/media/stream/nonsense?token=x`)).status).toBe(404);
    expect((await bad(`${wsBase(t)}/media/listen/ch_ZZZZZZZZZZZZZZZZ_a?unlock=x`)).status).toBe(404);
    expect((await bad(`${wsBase(t)}/media/elsewhere`)).status).toBe(404);
    // Malformed source id.
    expect((await bad(`${streamUrl(t, agent).replace(/source_id=[^&]+/, 'source_id=%20bad%20')}`)).status).toBe(400);
    // Not ready (no customer language yet).
    const early = await calls.createCall(key);
    const earlyAgent = await calls.join(early.id, early.agentKey);
    expect(earlyAgent.stream).toBeNull();
    const { mediaSecret, channelId } = await import('../../src/calls/join.js');
    const row = await t.server.app.db('calls').where({ id: early.id }).first();
    const notReady = await bad(`${wsBase(t)}/media/stream/${channelId(early.id, 'agent')}?token=${mediaSecret(row, 'agent', 'stream')}`);
    expect(notReady).toMatchObject({ status: 409, body: { detail: expect.stringMatching(/not ready/) } });
    // Ended.
    await calls.side(`/${id}/end`, agentKey, { method: 'POST' });
    expect(await bad(streamUrl(t, agent))).toMatchObject({ status: 409, body: { detail: 'the call has ended' } });
    expect((await bad(listenUrl(t, agent))).status).toBe(409);
  });

  it('closes a stream that sends a text frame, an odd-length frame or a frame over 1 s', async () => {
    const { agent } = await readyCall();
    const odd = await connect(streamUrl(t, agent));
    odd.send(Buffer.alloc(961));
    expect(await whenClosed(odd)).toEqual({ code: CLOSE.oddLength.code, reason: CLOSE.oddLength.reason });
    expect(CLOSE.oddLength.code).toBe(1007);

    const text = await connect(streamUrl(t, agent));
    text.send('hello');
    expect(await whenClosed(text)).toEqual({ code: 1003, reason: CLOSE.textFrame.reason });

    const big = await connect(streamUrl(t, agent));
    big.send(Buffer.alloc(MAX_STREAM_FRAME_BYTES + 2));
    expect(await whenClosed(big)).toEqual({ code: 1009, reason: CLOSE.tooBig.reason });

    // A frame of exactly one second is fine.
    const ok = await connect(streamUrl(t, agent));
    ok.send(Buffer.alloc(MAX_STREAM_FRAME_BYTES));
    await roundTrip(ok);
    expect(ok.readyState).toBe(ok.OPEN);
    ok.close();
  });

  it('a new stream with the same source_id replaces the older one (4003)', async () => {
    const { agent } = await readyCall();
    const first = await connect(streamUrl(t, agent));
    const closed = whenClosed(first);
    const second = await connect(streamUrl(t, agent));
    expect(await closed).toEqual({ code: 4003, reason: 'source replaced' });
    expect(second.readyState).toBe(second.OPEN);
    second.close();
  });

  it('a frame longer than 100 ms is cut into chunks of at most 100 ms', async () => {
    const { agent } = await readyCall();
    const ear = await Listener.open(listenUrl(t, agent));
    const mic = await connect(streamUrl(t, agent));
    const second = pattern(24_000, 7);
    mic.send(second);
    expect((await ear.waitForBytes(second.length)).equals(second)).toBe(true);
    expect(ear.chunks.map((c) => c.length - WAV_HEADER_BYTES)).toEqual(Array(10).fill(CHUNK_BYTES));
    mic.close();
    ear.close();
  });

  it('two sources of one side are mixed into one voice, sample by sample', async () => {
    const { id, agent } = await readyCall();
    const ear = await Listener.open(listenUrl(t, agent));
    const voiceA = Buffer.alloc(9_600);
    const voiceB = Buffer.alloc(9_600);
    for (let i = 0; i < 4_800; i++) {
      voiceA.writeInt16LE(((i * 37) % 2_000) - 1_000, i * 2);
      voiceB.writeInt16LE(((i * 11) % 3_000) - 1_500, i * 2);
    }
    // Interleaved 20 ms frames, as two live microphones would send them, each pair read by the server
    // before the next is sent. The server's clock stands still from before the sources join: however late
    // one socket's frame is read, neither source counts as silent (one that joined more than 60 ms before
    // the clock stopped would count as silent from the start).
    let headset!: WebSocket;
    let laptop!: WebSocket;
    const heard = await withServerClockStopped(async () => {
      headset = await connect(streamUrl(t, agent));
      laptop = await connect(streamUrl(t, agent).replace(/source_id=[^&]+/, 'source_id=laptop'));
      // A socket is in its room before its client hears that it opened.
      expect(t.server.media.room(id)?.stats().endpoints.stream).toBe(2);
      for (let offset = 0; offset < voiceA.length; offset += 960) {
        headset.send(voiceA.subarray(offset, offset + 960));
        laptop.send(voiceB.subarray(offset, offset + 960));
        await Promise.all([roundTrip(headset), roundTrip(laptop)]);
      }
      return ear.waitForBytes(voiceA.length);
    });
    // Mixed as far as both had sent and no further: nothing of one source alone, no padding.
    expect(heard.length).toBe(voiceA.length);
    for (let i = 0; i < 4_800; i++) expect(heard.readInt16LE(i * 2)).toBe(voiceA.readInt16LE(i * 2) + voiceB.readInt16LE(i * 2));

    // When one source goes quiet the other is heard alone, without waiting for it.
    const alone = pattern(2_400, 500);
    await streamAudio(headset, alone, 960, 20);
    const after = await ear.waitForBytes(voiceA.length + alone.length);
    expect(after.subarray(voiceA.length).equals(alone)).toBe(true);
    headset.close();
    laptop.close();
    ear.close();
  });

  it('the customer hanging up closes its sockets (4004); the same link joins again', async () => {
    const { id, agent, customer, customerKey } = await readyCall();
    const agentMic = await connect(streamUrl(t, agent));
    const customerMic = await connect(streamUrl(t, customer));
    const customerHears = await Listener.open(listenUrl(t, customer));
    const micClosed = whenClosed(customerMic);
    expect((await calls.side(`/${id}/end`, customerKey, { method: 'POST' })).status).toBe(200);
    expect(await micClosed).toEqual({ code: 4004, reason: 'left the call' });
    expect(await customerHears.closed).toEqual({ code: 4004, reason: 'left the call' });
    expect(customerHears.frames.at(-1)).toMatchObject({ type: 'notice', code: 'left' });
    expect(agentMic.readyState).toBe(agentMic.OPEN);
    const joinedEvents = () => t.server.app.db('events').where({ call_id: id, type: 'call.joined' }).count({ n: '*' }).first();
    const joinedBefore = Number((await joinedEvents())!.n);
    const back = await calls.join(id, customerKey);
    expect(Number((await joinedEvents())!.n)).toBe(joinedBefore + 1);
    const ear = await Listener.open(listenUrl(t, back));
    const mic = await connect(streamUrl(t, back));
    const voice = pattern(4_800, 3);
    mic.send(voice);
    expect((await ear.waitForBytes(voice.length)).equals(voice)).toBe(true);
    for (const ws of [agentMic, mic]) ws.close();
    ear.close();
  });

  it('a customer that hung up and reopens its media without joining is back in the call, and the agent is told', async () => {
    const { id, customer, customerKey } = await readyCall();
    expect((await calls.side(`/${id}/end`, customerKey, { method: 'POST' })).status).toBe(200);
    expect((await t.server.app.db('calls').where({ id }).first()).customer_joined_at).toBeNull();
    const mic = await connect(streamUrl(t, customer));
    expect((await t.server.app.db('calls').where({ id }).first()).customer_joined_at).not.toBeNull();
    const events = await t.server.app.db('events').where({ call_id: id }).orderBy('seq').pluck('type');
    expect(events.slice(-2)).toEqual(['call.left', 'call.joined']);
    mic.close();
  });

  it('a new link closes that side’s sockets only; the side rejoins with a fresh channel', async () => {
    const { id, agent, customer } = await readyCall();
    const agentMic = await connect(streamUrl(t, agent));
    const agentHears = await Listener.open(listenUrl(t, agent));
    const customerMic = await connect(streamUrl(t, customer));
    const customerHears = await Listener.open(listenUrl(t, customer));
    const micClosed = whenClosed(customerMic);

    const res = await calls.api(`/v1/calls/${id}/link`, key, { method: 'POST', body: { side: 'customer' } });
    const newKey = calls.keyOf((await res.json()).url);
    expect(await micClosed).toEqual({ code: 4001, reason: 'link replaced' });
    expect(await customerHears.closed).toEqual({ code: 4001, reason: 'link replaced' });
    expect(customerHears.frames.at(-1)).toMatchObject({ type: 'notice', code: 'link_replaced' });

    // The agent is untouched and still hears itself.
    const voice = pattern(4_800, 7);
    agentMic.send(voice);
    expect((await agentHears.waitForBytes(voice.length)).equals(voice)).toBe(true);
    expect(agentMic.readyState).toBe(agentMic.OPEN);

    // The old credentials are dead; the new link gives working ones.
    expect((await refusal(streamUrl(t, customer))).status).toBe(401);
    expect((await refusal(listenUrl(t, customer))).status).toBe(401);
    const rejoined = await calls.join(id, newKey);
    expect(rejoined.stream!.token).not.toBe(customer.stream!.token);
    const newMic = await connect(streamUrl(t, rejoined));
    const newEar = await Listener.open(listenUrl(t, rejoined));
    const again = pattern(4_800, 99);
    newMic.send(again);
    expect((await newEar.waitForBytes(again.length)).equals(again)).toBe(true);
    for (const ws of [agentMic, agentHears.ws, newMic, newEar.ws]) ws.close();
  });

  it('ending the call closes every socket with a call_ended notice (4000)', async () => {
    const { id, agent, customer } = await readyCall();
    const sockets = [await connect(streamUrl(t, agent)), await connect(streamUrl(t, customer))];
    const ears = [await Listener.open(listenUrl(t, agent)), await Listener.open(listenUrl(t, customer))];
    const closes = sockets.map(whenClosed);
    expect((await calls.api(`/v1/calls/${id}/end`, key, { method: 'POST' })).status).toBe(200);
    for (const closed of [...closes, ...ears.map((e) => e.closed)]) expect(await closed).toEqual({ code: 4000, reason: 'call ended' });
    for (const ear of ears) expect(ear.frames.at(-1)).toMatchObject({ type: 'notice', code: 'call_ended' });
    expect(t.server.media.room(id)).toBeUndefined();
  });

  it('a language change sends `reconnect` to the other side’s listeners and closes them (4002)', async () => {
    const { id, agent, customer, customerKey } = await readyCall();
    const agentHears = await Listener.open(listenUrl(t, agent));
    const customerHears = await Listener.open(listenUrl(t, customer));
    await calls.setLanguage(id, customerKey, 'sv');
    expect(await agentHears.closed).toEqual({ code: 4002, reason: 'reconnect' });
    expect(agentHears.frames.at(-1)).toMatchObject({ type: 'notice', code: 'reconnect', message: expect.any(String) });
    await roundTrip(customerHears.ws);
    expect(customerHears.ws.readyState).toBe(customerHears.ws.OPEN);
    // The agent reconnects with the same address.
    const back = await Listener.open(listenUrl(t, agent));
    expect(back.ws.readyState).toBe(back.ws.OPEN);
    // A name-only change reconnects nobody.
    await calls.side(`/${id}/me`, customerKey, { method: 'POST', body: { name: 'Sven' } });
    await roundTrip(back.ws);
    expect(back.ws.readyState).toBe(back.ws.OPEN);
    back.close();
    customerHears.close();
  });

  it('a listener that stops reading loses chunks (counted, one notice) instead of growing memory', async () => {
    const { id, agent } = await readyCall();
    const ear = await Listener.open(listenUrl(t, agent));
    await ear.waitForFrame((f) => f.type === 'provenance');
    ear.ws.pause();
    const mic = await connect(streamUrl(t, agent));
    const second = Buffer.alloc(MAX_STREAM_FRAME_BYTES, 1);
    let maxBuffered = 0;
    for (let i = 0; i < 400; i++) {
      mic.send(second);
      if (i % 20 === 0) {
        await roundTrip(mic); // the server has read what was sent so far
        maxBuffered = Math.max(maxBuffered, t.server.media.room(id)?.stats().maxBufferedBytes ?? 0);
      }
    }
    await waitUntil(() => (t.server.media.room(id)?.stats().chunksDropped ?? 0) > 100, 'dropped chunks');
    maxBuffered = Math.max(maxBuffered, t.server.media.room(id)!.stats().maxBufferedBytes);
    // Memory held for the listener stays near the cap (1 s of audio) plus one chunk in flight.
    expect(maxBuffered).toBeLessThanOrEqual(48_000 + WAV_HEADER_BYTES + CHUNK_BYTES);
    const stats = t.server.media.room(id)!.stats();
    expect(stats.chunksDropped).toBeGreaterThan(100);
    ear.ws.resume();
    const slow = await ear.waitForFrame((f) => f.type === 'notice' && f.code === 'listener_slow');
    expect(slow.message).toMatch(/dropped/);
    expect(ear.frames.filter((f) => f.code === 'listener_slow')).toHaveLength(1);
    mic.close();
    ear.close();
  });
});
