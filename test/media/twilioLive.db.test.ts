// A customer on a phone dialled through the API and an agent on WebSockets, in live mode: the server's
// own realtime interpreter against the realtime stand-in (it "interprets" by negating the samples),
// Twilio's REST API against its stand-in, and Twilio's side of the media stream scripted byte for byte.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulawToPcm16, pcm16ToMulaw } from '../../src/calls/media/audio/mulaw.js';
import { Downsampler24kTo8k, Upsampler8kTo24k } from '../../src/calls/media/audio/pcm.js';
import { backendName } from '../support/databases.js';
import { FRAME_BYTES as INTERPRETER_FRAME_BYTES, negatePcm16, startRealtimeStandIn, type RealtimeStandIn } from '../support/standins/realtimeStandIn.js';
import { startTwilioStandIn, type TwilioStandIn } from '../support/standins/twilioStandIn.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { callApi, connect, Listener, listenUrl, sine, streamAudio, streamUrl, withServerClockStopped, wsBase } from './support.js';
import { waitUntil } from '../support/waiting.js';
import { TwilioClient } from './twilioClient.js';

describe(`a phone in a live interpreted call (${backendName})`, () => {
  let t: TestServer;
  let realtime: RealtimeStandIn;
  let twilio: TwilioStandIn;
  let key: string;
  let orgId: string;
  beforeAll(async () => {
    realtime = await startRealtimeStandIn({ apiKey: 'sk-phone-call' });
    twilio = await startTwilioStandIn();
    t = await startTestServer({
      OPENAI_API_KEY: 'sk-phone-call',
      OPENAI_REALTIME_URL: realtime.url,
      TWILIO_API_BASE_URL: twilio.url,
      PUBLIC_BASE_URL: 'https://calls.example.com',
    });
    orgId = await t.createOrg({ balance: 10, voice_rate_per_minute: 0.6 });
    key = (await t.createKey(orgId, 'live')).key;
    await t.setTelephony(orgId, { account_sid: twilio.accountSid, auth_token: twilio.authToken, from_number: '+15005550006' });
  });
  afterAll(async () => {
    await t?.stop();
    await twilio?.close();
    await realtime?.close();
  });

  /** Where the TwiML of a dialled call sends Twilio's stream, on this server, and its token. */
  const streamOf = (sid: string) => {
    const twiml = twilio.created.get(sid)!.get('Twiml')!;
    const url = new URL(/<Stream url="([^"]+)"/.exec(twiml)![1]);
    return { url: `${wsBase(t)}${url.pathname}`, token: /<Parameter name="token" value="([^"]+)"/.exec(twiml)![1] };
  };

  it('the phone hears the agent interpreted, the agent hears the phone interpreted; the token opens one stream; ending the call hangs up; billed per second', async () => {
    const calls = callApi(t);
    const call = await calls.createCall(key, { agent_language: 'en', customer_language: 'es' });
    const dialled = await calls.api(`/v1/calls/${call.id}/dial`, key, { method: 'POST', body: { to: '+34600000001' } });
    expect(dialled.status).toBe(200);
    const sid = (await dialled.json()).twilio_call_sid;
    const { url, token } = streamOf(sid);

    const agent = await calls.join(call.id, call.agentKey);
    const agentHears = await Listener.open(listenUrl(t, agent));
    const agentMic = await connect(streamUrl(t, agent));
    const phone = await TwilioClient.open(url);
    phone.start({ token });
    await waitUntil(() => t.server.media.stats().transports.twilio.streams === 1, 'the phone stream admitted');

    // The single-use token opens no second stream.
    const replay = await TwilioClient.open(url);
    replay.start({ token });
    expect((await replay.closed).code).toBe(1008);

    const phoneVoice = pcm16ToMulaw(sine(8_000, 8_000, 300)); // one second from the phone
    const agentVoice = sine(24_000, 24_000, 440); // one second from the agent
    phone.media(phoneVoice);
    await streamAudio(agentMic, agentVoice, 4_800);

    // Agent hears: the phone's voice decoded, up to 24 kHz, interpreted (negated), in whole interpreter frames.
    const phoneWide = new Upsampler8kTo24k().process(mulawToPcm16(phoneVoice));
    const interpretedBytes = Math.floor(phoneWide.length / INTERPRETER_FRAME_BYTES) * INTERPRETER_FRAME_BYTES;
    const agentGot = await agentHears.waitForBytes(interpretedBytes);
    expect(agentGot.subarray(0, interpretedBytes).equals(negatePcm16(phoneWide.subarray(0, interpretedBytes)))).toBe(true);

    // The phone hears: the agent interpreted (negated), down to 8 kHz, mu-law, in 160-byte frames.
    const expectedPhone = pcm16ToMulaw(new Downsampler24kTo8k().process(negatePcm16(agentVoice)));
    const phoneGot = await phone.waitForAudio(expectedPhone.length - 160);
    expect(phoneGot.subarray(0, expectedPhone.length - 160).equals(expectedPhone.subarray(0, expectedPhone.length - 160))).toBe(true);

    await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST' });
    expect(await phone.closed).toEqual({ code: 4000, reason: 'call ended' });
    await waitUntil(() => twilio.hungUp.includes(sid), 'the phone hung up through the REST API');
    await waitUntil(async () => (await t.server.app.db('ledger_entries').where({ org_id: orgId, kind: 'call' })).length > 0, 'a call charge');
    const charges = await t.server.app.db('ledger_entries').where({ org_id: orgId, kind: 'call' });
    const seconds = charges.reduce((sum, row) => sum + Number(row.quantity), 0);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(charges.reduce((sum, row) => sum + Number(row.amount_micros), 0)).toBe(-seconds * 10_000);
    agentMic.close();
  });

  it("the agent's next turn clears what the phone still had of the last one: the phone hears the new turn at once", async () => {
    const calls = callApi(t);
    // Finnish is not a language of the translation model: the agent's speech goes to the realtime model,
    // which answers each turn of speech with a response, a turn of interpreted speech.
    const call = await calls.createCall(key, { agent_language: 'en', customer_language: 'fi' });
    const sid = (await (await calls.api(`/v1/calls/${call.id}/dial`, key, { method: 'POST', body: { to: '+358400000001' } })).json()).twilio_call_sid;
    const { url, token } = streamOf(sid);
    const agentMic = await connect(streamUrl(t, await calls.join(call.id, call.agentKey)));
    // A browser tab of the customer hears what the phone hears, unpaced: it shows when a turn has arrived.
    const customerHears = await Listener.open(listenUrl(t, await calls.join(call.id, call.customerKey)));
    const phone = await TwilioClient.open(url);
    phone.start({ token });
    // Audio for a stream whose token is still being checked is not queued for it: wait until it is in.
    await waitUntil(() => t.server.media.stats().transports.twilio.streams === 1, 'the phone stream admitted');
    await customerHears.waitForFrame((frame) => frame.type === 'provenance');

    const silence = Buffer.alloc(INTERPRETER_FRAME_BYTES); // a silent frame ends a turn of speech
    const turn1 = sine(48_000, 24_000, 440); // two seconds
    const turn2 = sine(9_600, 24_000, 660); // 0.4 s
    // The phone's clock stands still: it plays no further than its first frame, so turn 1 stays queued.
    await withServerClockStopped(async () => {
      await streamAudio(agentMic, Buffer.concat([turn1, silence]), 4_800);
      await customerHears.waitForBytes(turn1.length);
      expect(phone.received.some((frame) => frame.event === 'clear')).toBe(false);
      await streamAudio(agentMic, Buffer.concat([turn2, silence]), 4_800);
      await customerHears.waitForBytes(turn1.length + turn2.length);
      await phone.waitFor((frame) => frame.event === 'clear');
    });

    const cleared = phone.received.findIndex((frame) => frame.event === 'clear');
    const mediaBytes = (frames: typeof phone.received) =>
      Buffer.concat(frames.filter((f) => f.event === 'media').map((f) => Buffer.from(f.media.payload, 'base64')));
    const turn1Phone = turn1.length / 6; // 24 kHz PCM16 -> 8 kHz mu-law
    expect(mediaBytes(phone.received.slice(0, cleared)).length).toBeLessThan(turn1Phone);

    // After the clear the phone hears turn 2 from its first sample (the resampler's state runs on).
    const downsampler = new Downsampler24kTo8k();
    downsampler.process(negatePcm16(turn1));
    const expected = pcm16ToMulaw(downsampler.process(negatePcm16(turn2))).subarray(0, -160);
    await waitUntil(() => mediaBytes(phone.received.slice(cleared)).length >= expected.length, 'turn 2 on the phone');
    expect(mediaBytes(phone.received.slice(cleared)).subarray(0, expected.length).equals(expected)).toBe(true);
    expect(t.server.media.stats().transports.twilio.clears).toBeGreaterThanOrEqual(1);

    await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST' });
    await phone.closed;
    agentMic.close();
  });

  it('the phone hanging up leaves the call open for the agent', async () => {
    const calls = callApi(t);
    const call = await calls.createCall(key, { agent_language: 'en', customer_language: 'es' });
    const sid = (await (await calls.api(`/v1/calls/${call.id}/dial`, key, { method: 'POST', body: { to: '+34600000002' } })).json()).twilio_call_sid;
    const { url, token } = streamOf(sid);
    const phone = await TwilioClient.open(url);
    phone.start({ token });
    await waitUntil(async () => (await t.server.app.db('calls').where({ id: call.id }).first()).customer_joined_at !== null, 'the phone present');
    phone.stop();
    await phone.closed;
    await waitUntil(async () => (await t.server.app.db('calls').where({ id: call.id }).first()).customer_joined_at === null, 'the phone gone');
    expect((await (await calls.api(`/v1/calls/${call.id}`, key)).json()).status).toBe('open');
    expect(twilio.hungUp).not.toContain(sid);
  });
});
