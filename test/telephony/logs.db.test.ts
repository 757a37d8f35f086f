// No telephony secret reaches the log: a connector set, a phone dialled (its TwiML carries the stream
// token), its stream opened with that token, a status callback, a refused number, the call ended (the
// phone hung up), all logged at `trace`, and then none of the secrets in what the server wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pcm16ToMulaw } from '../../src/calls/media/audio/mulaw.js';
import { callApi, sine, wsBase } from '../media/support.js';
import { waitUntil } from '../support/waiting.js';
import { TwilioClient } from '../media/twilioClient.js';
import { backendName } from '../support/databases.js';
import { startTwilioStandIn, twilioSignature, type TwilioStandIn } from '../support/standins/twilioStandIn.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`the log of a dialled phone holds no secret (${backendName})`, () => {
  const lines: string[] = [];
  let t: TestServer;
  let twilio: TwilioStandIn;
  let stopped = false;
  beforeAll(async () => {
    twilio = await startTwilioStandIn();
    t = await startTestServer(
      { TWILIO_API_BASE_URL: twilio.url, PUBLIC_BASE_URL: 'https://calls.example.com' },
      { logLevel: 'trace', logDestination: { write: (line: string) => lines.push(line) } },
    );
  });
  afterAll(async () => {
    if (!stopped) await t?.stop();
    await twilio?.close();
  });

  it('dials, streams, takes a callback, hangs up, and logs none of the secrets', async () => {
    const orgId = await t.createOrg({ balance: 5 });
    const key = (await t.createKey(orgId, 'live')).key;
    await t.setTelephony(orgId, { account_sid: twilio.accountSid, auth_token: twilio.authToken, from_number: '+15005550006' });
    const calls = callApi(t);
    const call = await calls.createCall(key, { customer_language: 'fi' });
    twilio.refuse.add('+15005550001');
    expect((await calls.api(`/v1/calls/${call.id}/dial`, key, { method: 'POST', body: { to: '+15005550001' } })).status).toBe(400);
    const sid = (await (await calls.api(`/v1/calls/${call.id}/dial`, key, { method: 'POST', body: { to: '+358401234567' } })).json()).twilio_call_sid;
    const twiml = twilio.created.get(sid)!.get('Twiml')!;
    const token = /<Parameter name="token" value="([^"]+)"/.exec(twiml)![1];
    const path = new URL(/<Stream url="([^"]+)"/.exec(twiml)![1]).pathname;

    const phone = await TwilioClient.open(`${wsBase(t)}${path}`);
    phone.start({ token });
    await waitUntil(() => t.server.media.stats().transports.twilio.streams === 1, 'the stream admitted');
    phone.media(pcm16ToMulaw(sine(1_600, 8_000, 300)));
    const leg = await t.server.app.db('phone_legs').where({ twilio_call_sid: sid }).first();
    const params = { AccountSid: twilio.accountSid, CallSid: sid, CallStatus: 'in-progress' };
    const callback = await fetch(`${t.url}/twilio/status/${leg.id}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Twilio-Signature': twilioSignature(twilio.authToken, `https://calls.example.com/twilio/status/${leg.id}`, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    expect(callback.status).toBe(204);
    await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST' });
    await phone.closed;
    await waitUntil(() => twilio.hungUp.includes(sid), 'the hang-up');
    // Stopping flushes what the server still had to log (shutdown included).
    stopped = true;
    await t.stop();

    const log = lines.join('');
    expect(log).toContain(call.id);
    const basic = Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64');
    for (const [what, secret] of Object.entries({ 'auth token': twilio.authToken, 'stream token': token, 'Basic auth': basic, 'API key': key })) {
      expect(log.includes(secret), `${what} in the log`).toBe(false);
    }
  });
});
