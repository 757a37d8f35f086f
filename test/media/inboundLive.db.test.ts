// Inbound phone calls in live mode, end to end: Twilio (its stand-in) puts a caller through to one of
// the organization's numbers, the server's TwiML connects the caller's media stream (Twilio's side of
// it scripted byte for byte), and an agent on WebSockets hears the caller interpreted and is heard
// interpreted, through the server's own realtime interpreter against the realtime stand-in (which
// "interprets" by negating the samples). Once for each mode of a number.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulawToPcm16, pcm16ToMulaw } from '../../src/calls/media/audio/mulaw.js';
import { Downsampler24kTo8k, Upsampler8kTo24k } from '../../src/calls/media/audio/pcm.js';
import { backendName } from '../support/databases.js';
import { openEventStream } from '../support/sse.js';
import { FRAME_BYTES as INTERPRETER_FRAME_BYTES, negatePcm16, startRealtimeStandIn, type RealtimeStandIn } from '../support/standins/realtimeStandIn.js';
import { IncomingCall, startTwilioStandIn, type TwilioStandIn } from '../support/standins/twilioStandIn.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { waitUntil } from '../support/waiting.js';
import { callApi, connect, Listener, listenUrl, sine, streamAudio, streamUrl } from './support.js';
import { TwilioClient } from './twilioClient.js';

describe(`an inbound phone call in live mode (${backendName})`, () => {
  let t: TestServer;
  let realtime: RealtimeStandIn;
  let twilio: TwilioStandIn;
  let key: string;
  beforeAll(async () => {
    realtime = await startRealtimeStandIn({ apiKey: 'sk-inbound-call' });
    twilio = await startTwilioStandIn();
    t = await startTestServer({
      OPENAI_API_KEY: 'sk-inbound-call',
      OPENAI_REALTIME_URL: realtime.url,
      TWILIO_API_BASE_URL: twilio.url,
      PUBLIC_BASE_URL: 'https://calls.example.com',
    });
    const orgId = await t.createOrg({ balance: 10 });
    key = (await t.createKey(orgId, 'live')).key;
    await t.setTelephony(orgId, { account_sid: twilio.accountSid, auth_token: twilio.authToken, from_number: '+15005550006' });
  });
  afterAll(async () => {
    await t?.stop();
    await twilio?.close();
    await realtime?.close();
  });

  let numbers = 0;
  const register = async (body: Record<string, unknown>) => {
    const number = `+1415555${String(300 + numbers++).padStart(4, '0')}`;
    const res = await callApi(t).api('/v1/phone_numbers', key, { method: 'POST', body: { number, agent_language: 'en', ...body } });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; number: string; voice_url: string };
  };

  /** The phone and the agent talk: each hears the other interpreted (negated), the phone in 8 kHz mu-law. */
  async function talk(phone: TwilioClient, agentJoin: Parameters<typeof streamUrl>[1]) {
    const agentHears = await Listener.open(listenUrl(t, agentJoin));
    const agentMic = await connect(streamUrl(t, agentJoin));
    const phoneVoice = pcm16ToMulaw(sine(8_000, 8_000, 300));
    const agentVoice = sine(24_000, 24_000, 440);
    phone.media(phoneVoice);
    await streamAudio(agentMic, agentVoice, 4_800);

    const phoneWide = new Upsampler8kTo24k().process(mulawToPcm16(phoneVoice));
    const interpretedBytes = Math.floor(phoneWide.length / INTERPRETER_FRAME_BYTES) * INTERPRETER_FRAME_BYTES;
    const agentGot = await agentHears.waitForBytes(interpretedBytes);
    expect(agentGot.subarray(0, interpretedBytes).equals(negatePcm16(phoneWide.subarray(0, interpretedBytes)))).toBe(true);

    const expectedPhone = pcm16ToMulaw(new Downsampler24kTo8k().process(negatePcm16(agentVoice)));
    const phoneGot = await phone.waitForAudio(expectedPhone.length - 160);
    expect(phoneGot.subarray(0, expectedPhone.length - 160).equals(expectedPhone.subarray(0, expectedPhone.length - 160))).toBe(true);
    agentMic.close();
  }

  it('new_call: the caller picks Spanish, the agent takes the call from call.inbound on the event stream; both hear each other interpreted; ending the call hangs up', async () => {
    const number = await register({ mode: 'new_call', customer_languages: ['fr', 'es'] });
    const events = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
    const caller = new IncomingCall(twilio, { voiceUrl: number.voice_url, serverUrl: t.url, from: '+34600000002', to: number.number, fromCountry: 'ES' });
    await caller.ring();
    await caller.press('2');
    const inbound = await events.waitFor((event) => event.event === 'call.inbound');
    events.close();
    expect(inbound.data.data).toMatchObject({ customer_language: 'es', caller: '+34600000002', twilio_call_sid: caller.callSid });

    const calls = callApi(t);
    const callId = inbound.data.data.id as string;
    const agent = await calls.join(callId, calls.keyOf(inbound.data.data.agent_url));
    expect(agent).toMatchObject({ role: 'agent', ready: true, other_language: 'es' });

    const { url, token } = caller.stream();
    const phone = await TwilioClient.open(url);
    phone.start({ token });
    await waitUntil(() => t.server.media.stats().transports.twilio.streams === 1, 'the caller\'s stream admitted');
    await talk(phone, agent);

    await calls.api(`/v1/calls/${callId}/end`, key, { method: 'POST' });
    expect(await phone.closed).toEqual({ code: 4000, reason: 'call ended' });
    await waitUntil(() => twilio.hungUp.includes(caller.callSid), 'the caller hung up through the REST API');
  });

  it('pin: a caller types the customer PIN of an open call and is its customer; hanging up leaves the call open', async () => {
    const number = await register({ mode: 'pin', customer_languages: ['es'] });
    const calls = callApi(t);
    const res = await calls.api('/v1/calls', key, { method: 'POST', body: { agent_language: 'en', customer_language: 'es' } });
    const created = await res.json();
    const agent = await calls.join(created.id, calls.keyOf(created.agent_url));

    const caller = new IncomingCall(twilio, { voiceUrl: number.voice_url, serverUrl: t.url, from: '+34600000003', to: number.number });
    await caller.ring();
    await caller.press(created.phone_pins.customer);
    const { url, token } = caller.stream();
    expect(url).toMatch(new RegExp(`/media/twilio/ch_${created.id.replace(/^call_/, '')}_c$`));
    const phone = await TwilioClient.open(url);
    phone.start({ token });
    await waitUntil(async () => (await t.server.app.db('calls').where({ id: created.id }).first()).customer_joined_at !== null, 'the caller present as the customer');
    await talk(phone, agent);

    phone.stop();
    await phone.closed;
    await waitUntil(async () => (await t.server.app.db('calls').where({ id: created.id }).first()).customer_joined_at === null, 'the caller left');
    expect((await t.server.app.db('calls').where({ id: created.id }).first()).status).toBe('open');
  });
});
