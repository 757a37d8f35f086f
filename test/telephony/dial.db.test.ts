import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { waitUntil } from '../support/waiting.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { startTwilioStandIn, twilioSignature, type TwilioStandIn } from '../support/standins/twilioStandIn.js';

const PUBLIC = 'https://calls.example.com';

describe(`dialling a phone through Twilio (${backendName})`, () => {
  let t: TestServer;
  let twilio: TwilioStandIn;
  let key: string;
  let orgId: string;
  beforeAll(async () => {
    twilio = await startTwilioStandIn();
    t = await startTestServer({ PUBLIC_BASE_URL: PUBLIC, TWILIO_API_BASE_URL: twilio.url });
    orgId = await t.createOrg({ balance: 5 });
    key = (await t.createKey(orgId, 'live')).key;
    await t.setTelephony(orgId, { account_sid: twilio.accountSid, auth_token: twilio.authToken, from_number: '+15005550006' });
  });
  afterAll(async () => {
    await t?.stop();
    await twilio?.close();
  });
  beforeEach(() => twilio.reset());

  const api = (path: string, body?: unknown) =>
    fetch(`${t.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const newCall = async (body: Record<string, unknown> = {}) => {
    const res = await api('/v1/calls', { agent_language: 'en', customer_language: 'fi', metadata: { ticket: 7 }, ...body });
    expect(res.status).toBe(201);
    return (await res.json()).id as string;
  };
  const legsOf = (callId: string) => t.server.app.db('phone_legs').where({ call_id: callId }).orderBy('created_at');
  const eventsOf = async (callId: string, prefix = 'call.phone.') =>
    (await t.server.app.db('events').where({ call_id: callId }).orderBy('seq'))
      .filter((row) => row.type.startsWith(prefix))
      .map((row) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload));

  it('places the call with Basic auth and exactly the form Twilio takes, and records the leg', async () => {
    const callId = await newCall();
    const res = await api(`/v1/calls/${callId}/dial`, { to: '+358401234567' });
    expect(res.status).toBe(200);
    const { twilio_call_sid: sid } = await res.json();
    expect(sid).toMatch(/^CA[0-9a-f]{32}$/);

    const [request] = twilio.requests;
    expect(request.path).toBe(`/2010-04-01/Accounts/${twilio.accountSid}/Calls.json`);
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64')}`);
    const [leg] = await legsOf(callId);
    expect(leg).toMatchObject({ side: 'customer', to_number: '+358401234567', twilio_call_sid: sid, status: 'dialing', ended_at: null });
    const form = twilio.created.get(sid)!;
    const channel = `ch_${callId.replace(/^call_/, '')}_c`;
    const twiml = form.get('Twiml')!;
    const token = /<Parameter name="token" value="(pst_[0-9A-Za-z]{40})"\/>/.exec(twiml)?.[1];
    expect(token).toBeDefined();
    expect([...form.entries()].sort()).toEqual(
      [
        ['To', '+358401234567'],
        ['From', '+15005550006'],
        [
          'Twiml',
          '<?xml version="1.0" encoding="UTF-8"?><Response><Connect>' +
            `<Stream url="wss://calls.example.com/media/twilio/${channel}"><Parameter name="token" value="${token}"/></Stream>` +
            '</Connect></Response>',
        ],
        ['StatusCallback', `${PUBLIC}/twilio/status/${leg.id}`],
        ['StatusCallbackMethod', 'POST'],
        ['StatusCallbackEvent', 'ringing'],
        ['StatusCallbackEvent', 'answered'],
        ['StatusCallbackEvent', 'completed'],
        ['Timeout', '30'],
      ].sort(),
    );
    // Only the token's hash is kept.
    expect(JSON.stringify(leg)).not.toContain(token);
  });

  it("answers 400 with Twilio's message for a number it refuses, and records nothing", async () => {
    const callId = await newCall();
    twilio.refuse.add('+15005550001');
    const res = await api(`/v1/calls/${callId}/dial`, { to: '+15005550001' });
    expect(res.status).toBe(400);
    expect((await res.json()).detail).toBe("Twilio refused the call: The 'To' number +15005550001 is not a valid phone number.");
    expect(await legsOf(callId)).toEqual([]);
  });

  it('retries Twilio 5xx a bounded number of times, then 502 with nothing recorded', async () => {
    const callId = await newCall();
    twilio.failNext(3, 503);
    const res = await api(`/v1/calls/${callId}/dial`, { to: '+358401234567' });
    expect(res.status).toBe(502);
    expect((await res.json()).detail).toBe('Twilio answered HTTP 503: An internal server error has occurred (3 attempts)');
    expect(twilio.requests).toHaveLength(3);
    expect(await legsOf(callId)).toEqual([]);

    twilio.reset();
    twilio.failNext(1, 500);
    const retried = await api(`/v1/calls/${callId}/dial`, { to: '+358401234567' });
    expect(retried.status).toBe(200);
    expect(twilio.requests).toHaveLength(2);
    expect(await legsOf(callId)).toHaveLength(1);
  });

  it('needs the customer language first (a phone cannot choose one)', async () => {
    const callId = await newCall({ customer_language: null });
    const res = await api(`/v1/calls/${callId}/dial`, { to: '+358401234567' });
    expect(res.status).toBe(400);
    expect((await res.json()).detail).toMatch(/customer language/);
    expect(twilio.requests).toHaveLength(0);
  });

  it('a new dial for the same side hangs up the older leg; ending the call hangs up the phone', async () => {
    const callId = await newCall();
    const first = (await (await api(`/v1/calls/${callId}/dial`, { to: '+358401234567' })).json()).twilio_call_sid;
    const agent = (await (await api(`/v1/calls/${callId}/dial`, { side: 'agent', to: '+358409999999' })).json()).twilio_call_sid;
    const second = (await (await api(`/v1/calls/${callId}/dial`, { to: '+358401234568' })).json()).twilio_call_sid;
    expect(twilio.hungUp).toEqual([first]);
    const hangUp = twilio.requests.find((request) => request.path.endsWith(`/Calls/${first}.json`))!;
    expect([...hangUp.form!.entries()]).toEqual([['Status', 'completed']]);
    const legs = await legsOf(callId);
    expect(legs.map((leg) => [leg.twilio_call_sid, leg.end_reason])).toEqual([
      [first, 'replaced'],
      [agent, null],
      [second, null],
    ]);

    expect((await api(`/v1/calls/${callId}/end`, {})).status).toBe(200);
    await waitUntil(async () => twilio.hungUp.length === 3, 'the end hangs up both phones');
    expect(twilio.hungUp.slice(1).sort()).toEqual([agent, second].sort());
    expect((await legsOf(callId)).map((leg) => leg.end_reason)).toEqual(['replaced', 'call_ended', 'call_ended']);
  });

  it('turns signed status callbacks into events with the call metadata; a forged one is 403', async () => {
    const callId = await newCall();
    const sid = (await (await api(`/v1/calls/${callId}/dial`, { to: '+358401234567' })).json()).twilio_call_sid;
    const [leg] = await legsOf(callId);
    const url = `${PUBLIC}/twilio/status/${leg.id}`;
    const callback = (params: Record<string, string>, signature = twilioSignature(twilio.authToken, url, params)) =>
      fetch(`${t.url}/twilio/status/${leg.id}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': signature },
        body: new URLSearchParams(params).toString(),
      });
    const form = (status: string) => ({ AccountSid: twilio.accountSid, CallSid: sid, CallStatus: status, To: '+358401234567', Direction: 'outbound-api' });

    expect((await callback(form('ringing'))).status).toBe(204);
    expect((await callback(form('in-progress'))).status).toBe(204);
    // A retried callback, or one arriving late (ringing after answered), changes nothing.
    expect((await callback(form('in-progress'))).status).toBe(204);
    expect((await callback(form('ringing'))).status).toBe(204);
    const forged = await callback(form('completed'), twilioSignature('not-the-auth-token', url, form('completed')));
    expect(forged.status).toBe(403);
    expect(await forged.json()).toEqual({ detail: 'invalid X-Twilio-Signature' });
    expect((await callback(form('completed'), '')).status).toBe(403);
    // Signed over another URL (not as PUBLIC_BASE_URL says): refused.
    expect((await callback(form('completed'), twilioSignature(twilio.authToken, `${t.url}/twilio/status/${leg.id}`, form('completed')))).status).toBe(403);
    // A changed parameter breaks the signature.
    expect((await callback({ ...form('busy') }, twilioSignature(twilio.authToken, url, form('completed')))).status).toBe(403);
    expect((await callback(form('no-answer'))).status).toBe(204);

    const events = await eventsOf(callId);
    expect(events.map((event) => [event.type, event.data.reason])).toEqual([
      ['call.phone.ringing', undefined],
      ['call.phone.answered', undefined],
      ['call.phone.completed', 'no-answer'],
    ]);
    expect(events[0]).toMatchObject({ livemode: true, metadata: { ticket: 7 }, data: { id: callId, side: 'customer', twilio_call_sid: sid } });
    expect((await legsOf(callId))[0]).toMatchObject({ status: 'completed', end_reason: 'no-answer' });
    // The phone leaving does not end the call.
    expect((await (await api(`/v1/calls/${callId}`)).json()).status).toBe('open');
    // Unknown legs answer as a forged callback does.
    expect((await fetch(`${t.url}/twilio/status/leg_nope`, { method: 'POST' })).status).toBe(403);
  });
});
