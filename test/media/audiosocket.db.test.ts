import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINE_ERROR } from '../../src/calls/media/transports/audiosocket/protocol.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { Listener, Pbx, type PbxMessage, callApi, listenUrl, sine } from './support.js';
import { waitUntil } from '../support/waiting.js';

const samples = (buf: Buffer) => Array.from({ length: buf.length >> 1 }, (_, i) => buf.readInt16LE(i * 2));
/**
 * The end of a stretch of speech: its last partial frame, padded with silence (a sine is never zero for 40
 * samples on end). Nothing is queued for the line after it, so the frames up to it are all the speech gave.
 */
const paddedEnd = (frames: PbxMessage[]) => frames.findIndex((frame) => samples(frame.payload).slice(-40).every((sample) => sample === 0));

describe(`AudioSocket phone lines (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let calls: ReturnType<typeof callApi>;
  let port: number;
  beforeAll(async () => {
    t = await startTestServer({ AUDIOSOCKET_PORT: '0' });
    key = (await t.createKey(await t.createOrg({ name: 'PBX Org' }), 'test')).key;
    calls = callApi(t);
    port = t.server.ports.audiosocket!;
    expect(port).toBeGreaterThan(0);
  });
  afterAll(() => t?.stop());

  async function callWithLine(side: 'agent' | 'customer' = 'customer') {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const res = await calls.api(`/v1/calls/${call.id}/phone-line`, key, { method: 'POST', body: { side } });
    const line = await res.json();
    return { ...call, lineId: line.audiosocket_id as string };
  }

  it('a line plays its side: in test mode it hears its own voice back at 8 kHz, paced in 320-byte frames', async () => {
    const { id, lineId, customerKey } = await callWithLine('customer');
    const pbx = await Pbx.connect(port);
    pbx.sendUuid(lineId);
    await waitUntil(() => (t.server.media.room(id)?.stats().endpoints.line ?? 0) === 1, 'the line to join');
    // The side's listen socket hears the phone's voice too, at 24 kHz.
    const customer = await calls.join(id, customerKey);
    const ear = await Listener.open(listenUrl(t, customer));

    // The PBX sends the whole second at once: the pacing under test is the server's alone, and no gap in
    // what the test sends (a loaded machine) can make the server pad a frame with silence mid-speech.
    // 1 s at 8 kHz and half a frame: the echo's last frame is padded, which marks its end.
    const voice = sine(8_080, 8_000, 400);
    const started = performance.now();
    for (let offset = 0; offset < voice.length; offset += 320) pbx.send(0x10, voice.subarray(offset, offset + 320));
    await waitUntil(() => paddedEnd(pbx.audio()) >= 0, 'the end of the echo');
    const frames = pbx.audio();
    expect(frames.every((f) => f.payload.length === 320)).toBe(true);
    // 8,080 samples, less the few the resampling filters hold back: 50 whole frames and the padded end.
    expect(frames).toHaveLength(51);
    expect(paddedEnd(frames)).toBe(50);
    // Paced in real time: ~20 ms apart, not in a burst (a late timer restarts the pace, it never bursts).
    const span = frames.at(-1)!.at - frames[0].at;
    expect(span).toBeGreaterThan(700);
    expect(frames.at(-1)!.at - started).toBeGreaterThan(900);

    // The same voice, five 8 kHz samples later (resampling filters), within 2% of the signal.
    const heard = samples(Buffer.concat(frames.map((f) => f.payload)));
    const original = samples(voice);
    let error = 0;
    for (let i = 100; i < 7_800; i++) error += (heard[i] - original[i - 5]) ** 2;
    expect(Math.sqrt(error / 7_700)).toBeLessThan(0.02 * 8_000);

    const wide = await ear.waitForBytes(2 * 24_000 * 0.9);
    expect(wide.length % 2).toBe(0);

    // Hangup from the PBX: the line leaves, the call stays open.
    pbx.send(0x00);
    await pbx.ended;
    await waitUntil(() => (t.server.media.room(id)?.stats().endpoints.line ?? 0) === 0, 'the line to leave');
    expect((await (await calls.api(`/v1/calls/${id}`, key)).json()).status).toBe('open');
    ear.close();
  });

  it('an unknown UUID gets an error frame and the connection closes', async () => {
    const pbx = await Pbx.connect(port);
    pbx.sendUuid('00000000-0000-4000-8000-000000000000');
    await pbx.ended;
    expect(pbx.messages).toHaveLength(1);
    expect(pbx.messages[0].kind).toBe(0xff);
    expect([...pbx.messages[0].payload]).toEqual([LINE_ERROR.unknownLine]);
  });

  it('a line for a call that is not ready yet is refused with 0x12 and taken once the languages are known', async () => {
    const call = await calls.createCall(key, {});
    const line = await (await calls.api(`/v1/calls/${call.id}/phone-line`, key, { method: 'POST', body: { side: 'agent' } })).json();
    const early = await Pbx.connect(port);
    early.sendUuid(line.audiosocket_id);
    await early.ended;
    expect(early.messages.map((m) => [m.kind, ...m.payload])).toEqual([[0xff, LINE_ERROR.notReady]]);

    await calls.setLanguage(call.id, call.customerKey, 'de');
    const later = await Pbx.connect(port);
    later.sendUuid(line.audiosocket_id);
    await waitUntil(() => (t.server.media.room(call.id)?.stats().endpoints.line ?? 0) === 1, 'the line');
    expect(later.messages).toHaveLength(0);
    later.send(0x00);
    await waitUntil(() => !t.server.media.room(call.id)?.stats().endpoints.line, 'the line to leave');
  });

  it('a first message that is not a UUID is refused the same way', async () => {
    const pbx = await Pbx.connect(port);
    pbx.send(0x10, Buffer.alloc(320));
    await pbx.ended;
    expect(pbx.messages.map((m) => [m.kind, ...m.payload])).toEqual([[0xff, LINE_ERROR.badFirstMessage]]);
  });

  it('a new phone line for the side hangs up the old connection; the other side is untouched', async () => {
    const { id, lineId } = await callWithLine('customer');
    const agentLine = await (await calls.api(`/v1/calls/${id}/phone-line`, key, { method: 'POST', body: { side: 'agent' } })).json();
    const old = await Pbx.connect(port);
    old.sendUuid(lineId);
    const agentPbx = await Pbx.connect(port);
    agentPbx.sendUuid(agentLine.audiosocket_id);
    await waitUntil(() => (t.server.media.room(id)?.stats().endpoints.line ?? 0) === 2, 'both lines');

    const fresh = await (await calls.api(`/v1/calls/${id}/phone-line`, key, { method: 'POST', body: { side: 'customer' } })).json();
    await old.ended;
    expect(old.messages.at(-1)).toMatchObject({ kind: 0x00 });
    expect(old.messages.at(-1)!.payload.length).toBe(0);

    // The old id is dead; the new one works; the agent's line is still up.
    const retry = await Pbx.connect(port);
    retry.sendUuid(lineId);
    await retry.ended;
    expect(retry.messages[0].kind).toBe(0xff);
    const next = await Pbx.connect(port);
    next.sendUuid(fresh.audiosocket_id);
    await waitUntil(() => (t.server.media.room(id)?.stats().endpoints.line ?? 0) === 2, 'the new line');
    expect(agentPbx.socket.destroyed).toBe(false);

    // Ending the call hangs up every line.
    await calls.api(`/v1/calls/${id}/end`, key, { method: 'POST' });
    await Promise.all([next.ended, agentPbx.ended]);
    expect(next.messages.at(-1)!.kind).toBe(0x00);
    expect(agentPbx.messages.at(-1)!.kind).toBe(0x00);
    // And an ended call's line is refused.
    const late = await Pbx.connect(port);
    late.sendUuid(fresh.audiosocket_id);
    await late.ended;
    expect(late.messages.map((m) => [m.kind, ...m.payload])).toEqual([[0xff, LINE_ERROR.callEnded]]);
  });

  it('never sends an empty audio frame: the end of speech is padded to a whole frame', async () => {
    const { id, lineId } = await callWithLine('agent');
    const pbx = await Pbx.connect(port);
    pbx.sendUuid(lineId);
    await waitUntil(() => (t.server.media.room(id)?.stats().endpoints.line ?? 0) === 1, 'the line');
    pbx.send(0x10, sine(250, 8_000, 300)); // 31.25 ms: one whole frame and a bit
    pbx.send(0x03, Buffer.from('5')); // DTMF is ignored
    await waitUntil(() => paddedEnd(pbx.audio()) >= 0, 'the padded tail');
    const frames = pbx.audio();
    expect(frames.length).toBe(2);
    expect(paddedEnd(frames)).toBe(1);
    expect(frames.every((f) => f.payload.length === 320)).toBe(true);
    // Ending the call hangs the line up: what followed the padded tail until then is the hangup alone.
    expect((await calls.api(`/v1/calls/${id}/end`, key, { method: 'POST' })).status).toBe(200);
    await pbx.ended;
    expect(pbx.messages.slice(pbx.messages.indexOf(frames[1]) + 1).map((m) => m.kind)).toEqual([0x00]);
  });
});
