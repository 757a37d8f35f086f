// Twilio Media Streams driven directly (no dial): a bridge an integrator runs with the side's own
// stream token. In test mode the phone hears its own voice, so a bridge can be tested without paying.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulawToPcm16, pcm16ToMulaw } from '../../src/calls/media/audio/mulaw.js';
import { Downsampler24kTo8k, Upsampler8kTo24k } from '../../src/calls/media/audio/pcm.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { callApi, refusal, sine, wsBase, type Join } from './support.js';
import { waitUntil } from '../support/waiting.js';
import { FRAME_BYTES, TwilioClient } from './twilioClient.js';

describe(`Twilio media streams (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  beforeAll(async () => {
    t = await startTestServer();
    key = (await t.createKey(await t.createOrg(), 'test')).key;
  });
  afterAll(() => t?.stop());

  const streamUrl = (join: Join) => `${wsBase(t)}/media/twilio/${join.stream!.channel_id}`;
  const readyCall = async () => {
    const calls = callApi(t);
    const call = await calls.createCall(key, { agent_language: 'en', customer_language: 'fi' });
    return { calls, call, customer: await calls.join(call.id, call.customerKey), agent: await calls.join(call.id, call.agentKey) };
  };
  const eventTypes = async (callId: string) =>
    (await t.server.app.db('events').where({ call_id: callId }).orderBy('seq')).map((row) => row.type as string);

  it("test mode: the phone hears its own voice as 20 ms mu-law frames, marks follow what was sent, and presence follows the stream", async () => {
    const { call, customer } = await readyCall();
    const phone = await TwilioClient.open(streamUrl(customer));
    phone.start({ token: customer.stream!.token });
    await waitUntil(() => t.server.media.stats().transports.twilio.streams === 1, 'the stream admitted');
    expect(await eventTypes(call.id)).toContain('call.joined');

    const voice = pcm16ToMulaw(sine(8_000, 8_000, 300)); // one second of 8 kHz audio
    phone.media(voice);
    // What the server does with it: decode, up to 24 kHz, echoed, down to 8 kHz, encode.
    const expected = pcm16ToMulaw(new Downsampler24kTo8k().process(new Upsampler8kTo24k().process(mulawToPcm16(voice))));
    const heard = await phone.waitForAudio(expected.length - FRAME_BYTES);
    expect(heard.subarray(0, expected.length - FRAME_BYTES).equals(expected.subarray(0, expected.length - FRAME_BYTES))).toBe(true);

    const media = phone.received.filter((f) => f.event === 'media');
    for (const frame of media) {
      expect(frame).toEqual({ event: 'media', streamSid: phone.streamSid, media: { payload: expect.any(String) } });
      expect(Buffer.from(frame.media.payload, 'base64').length).toBe(FRAME_BYTES);
    }
    // A mark after at most 25 frames (0.5 s) of audio, named in order.
    await phone.waitFor((f) => f.event === 'mark');
    const marks = phone.received.map((f, i) => ({ f, i })).filter(({ f }) => f.event === 'mark');
    expect(marks[0].f).toEqual({ event: 'mark', streamSid: phone.streamSid, mark: { name: '1' } });
    expect(marks[0].i).toBeLessThanOrEqual(25);
    expect(phone.received.some((f) => f.event === 'clear')).toBe(false);

    phone.stop();
    expect((await phone.closed).code).toBe(1000);
    await waitUntil(async () => (await eventTypes(call.id)).includes('call.left'), 'call.left');
    const row = await t.server.app.db('calls').where({ id: call.id }).first();
    expect(row).toMatchObject({ status: 'open', customer_joined_at: null });
  });

  it("clears what the phone holds when the other side changes language", async () => {
    const { calls, call, customer } = await readyCall();
    const phone = await TwilioClient.open(streamUrl(customer));
    phone.echoMarks = false;
    phone.start({ token: customer.stream!.token });
    await waitUntil(() => t.server.media.stats().transports.twilio.streams === 1, 'the stream admitted');
    phone.media(pcm16ToMulaw(sine(4_000, 8_000, 300)));
    await phone.waitForAudio(FRAME_BYTES * 5);
    await calls.setLanguage(call.id, call.agentKey, 'de');
    const clear = await phone.waitFor((f) => f.event === 'clear');
    expect(clear).toEqual({ event: 'clear', streamSid: phone.streamSid });
    phone.ws.close();
    await phone.closed;
  });

  it('refuses unknown channels and calls not ready before the upgrade, and a wrong token after start', async () => {
    const { customer } = await readyCall();
    expect(await refusal(`${wsBase(t)}/media/twilio/ch_nope_c`)).toEqual({ status: 404, body: { detail: 'no such stream channel' } });
    const calls = callApi(t);
    const notReady = await calls.createCall(key, { agent_language: 'en' });
    const channel = `ch_${notReady.id.replace(/^call_/, '')}_c`;
    expect((await refusal(`${wsBase(t)}/media/twilio/${channel}`)).status).toBe(409);

    const forged = await TwilioClient.open(streamUrl(customer));
    forged.start({ token: 'not-the-token' });
    expect(await forged.closed).toEqual({ code: 1008, reason: 'missing or invalid token parameter' });
    const none = await TwilioClient.open(streamUrl(customer));
    none.start({});
    expect((await none.closed).code).toBe(1008);
    const garbage = await TwilioClient.open(streamUrl(customer));
    garbage.ws.send('{"event":"start","start":{"streamSid":"MZ1","mediaFormat":{"encoding":"audio/l16","sampleRate":16000,"channels":1}}}');
    expect((await garbage.closed).code).toBe(1007);
    expect(t.server.media.stats().transports.twilio.streams).toBe(0);
  });

  it('ending the call closes the stream (4000)', async () => {
    const { calls, call, customer } = await readyCall();
    const phone = await TwilioClient.open(streamUrl(customer));
    phone.start({ token: customer.stream!.token });
    await waitUntil(() => t.server.media.stats().transports.twilio.streams >= 1, 'the stream admitted');
    await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST' });
    expect(await phone.closed).toEqual({ code: 4000, reason: 'call ended' });
  });
});
