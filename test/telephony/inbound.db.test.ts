// The Voice webhook of the organization's phone numbers, driven as Twilio drives it (signed requests,
// <Gather> actions followed): the TwiML answers of each mode and every way a caller is turned away.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { IncomingCall, startTwilioStandIn, type TwilioStandIn } from '../support/standins/twilioStandIn.js';

const PUBLIC = 'https://calls.example.com';
const XML = '<?xml version="1.0" encoding="UTF-8"?>';

describe(`incoming phone calls: the Voice webhook (${backendName})`, () => {
  let t: TestServer;
  let twilio: TwilioStandIn;
  let orgId: string;
  let test: string;
  let live: string;
  beforeAll(async () => {
    twilio = await startTwilioStandIn();
    // No OPENAI_API_KEY: live calls have no interpretation engine.
    t = await startTestServer({ PUBLIC_BASE_URL: PUBLIC, TWILIO_API_BASE_URL: twilio.url });
    orgId = await t.createOrg({ balance: 5 });
    test = (await t.createKey(orgId, 'test')).key;
    live = (await t.createKey(orgId, 'live')).key;
    await t.setTelephony(orgId, { account_sid: twilio.accountSid, auth_token: twilio.authToken, from_number: '+15005550006' });
  });
  afterAll(async () => {
    await t?.stop();
    await twilio?.close();
  });
  beforeEach(() => twilio.reset());

  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${t.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
  };
  let numbers = 0;
  const register = async (key: string, body: Record<string, unknown>): Promise<{ id: string; number: string; voice_url: string; status_callback_url: string }> => {
    const created = await api(key, 'POST', '/v1/phone_numbers', { number: `+1415555${String(200 + numbers++).padStart(4, '0')}`, agent_language: 'en', ...body });
    expect(created.status).toBe(201);
    return created.body;
  };
  const callIn = (number: { voice_url: string; number: string }, options: { from?: string; fromCountry?: string; authToken?: string } = {}) =>
    new IncomingCall(twilio, { voiceUrl: number.voice_url, serverUrl: t.url, from: options.from ?? '+34600000001', to: number.number, ...options });
  const inboundEvents = async (mode: 'live' | 'test') =>
    (await t.server.app.db('events').where({ org_id: orgId, mode, type: 'call.inbound' }).orderBy('seq')).map((row) =>
      typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
    );

  it('new_call with several languages: a menu, each prompt in its own language; the key chosen starts a call, announced with the agent link, then the stream', async () => {
    const number = await register(test, { mode: 'new_call', agent_name: 'Alice', customer_languages: ['es', 'fr', 'de'], metadata: { queue: 'support' } });
    const call = callIn(number);
    const menu = await call.ring();
    expect(menu.status).toBe(200);
    const menuAction = `${number.voice_url}/language/1`;
    expect(menu.twiml).toBe(
      `${XML}<Response><Gather input="dtmf" numDigits="1" timeout="6" action="${menuAction}" method="POST" actionOnEmptyResult="true">` +
        '<Say language="es-ES">Para español, pulse 1.</Say>' +
        '<Say language="fr-FR">En français, appuyez sur 2.</Say>' +
        '<Say language="de-DE">Für Deutsch drücken Sie die 3.</Say>' +
        '</Gather></Response>',
    );
    // No key, then a key the menu does not offer: the menu again, counted.
    expect((await call.press('')).twiml).toContain(`action="${number.voice_url}/language/2"`);
    expect((await call.press('7')).twiml).toContain(`action="${number.voice_url}/language/3"`);
    const connected = await call.press('2');
    expect(connected.status).toBe(200);
    const [event] = await inboundEvents('test');
    const callId = event.data.id as string;
    const channel = `ch_${callId.replace(/^call_/, '')}_c`;
    const { token } = call.stream();
    expect(connected.twiml).toBe(
      `${XML}<Response><Say language="fr-FR">Veuillez patienter, nous vous mettons en relation.</Say>` +
        `<Connect><Stream url="wss://calls.example.com/media/twilio/${channel}"><Parameter name="token" value="${token}"/></Stream></Connect></Response>`,
    );
    expect(token).toMatch(/^pst_[0-9A-Za-z]{40}$/);
    expect(event).toMatchObject({
      type: 'call.inbound',
      livemode: false,
      metadata: { queue: 'support' },
      data: {
        id: callId,
        status: 'open',
        agent_language: 'en',
        agent_name: 'Alice',
        customer_language: 'fr',
        caller: '+34600000001',
        phone_number: number.number,
        phone_number_id: number.id,
        twilio_call_sid: call.callSid,
        agent_url: expect.stringMatching(new RegExp(`^${PUBLIC}/call/${callId}#k=ck_`)),
      },
    });
    // The agent's link opens the agent's side.
    const key = new URL(event.data.agent_url).hash.slice('#k='.length);
    const joined = await fetch(`${t.url}/calls/public/${callId}`, { headers: { 'X-Call-Key': key } });
    expect((await joined.json()).role).toBe('agent');
    const [leg] = await t.server.app.db('phone_legs').where({ call_id: callId });
    expect(leg).toMatchObject({ side: 'customer', direction: 'inbound', to_number: '+34600000001', twilio_call_sid: call.callSid, status: 'answered' });

    // The same signed request again (a replay: Twilio's signature has no time in it) starts nothing.
    const calls = await t.server.app.db('calls').count({ n: '*' }).first();
    const replayed = await call.replay();
    expect(replayed.twiml).toBe(`${XML}<Response><Say language="fr-FR">Cet appel est déjà terminé. Au revoir.</Say><Hangup/></Response>`);
    expect(await t.server.app.db('calls').count({ n: '*' }).first()).toEqual(calls);
  });

  it('new_call with one language: no menu; with none: the language of the caller\'s country; three wrong menu keys: the first language', async () => {
    const one = await register(test, { mode: 'new_call', customer_languages: ['pt-PT'] });
    const direct = callIn(one);
    expect((await direct.ring()).twiml).toMatch(/^<\?xml[^>]+><Response><Say language="pt-PT">Aguarde um momento, estamos conectando você\.<\/Say><Connect><Stream /);

    const detect = await register(test, { mode: 'new_call' });
    const fromFinland = callIn(detect, { from: '+358401234567', fromCountry: 'FI' });
    expect((await fromFinland.ring()).twiml).toContain('<Say language="fi-FI">Hetkinen, yhdistämme puhelua.</Say><Connect>');
    expect((await inboundEvents('test')).at(-1).data).toMatchObject({ customer_language: 'fi', caller: '+358401234567' });

    const menu = await register(test, { mode: 'new_call', customer_languages: ['it', 'nl'] });
    const undecided = callIn(menu);
    await undecided.ring();
    await undecided.press('9');
    await undecided.press('0');
    expect((await undecided.press('')).twiml).toContain('<Say language="it-IT">Attenda in linea, la stiamo collegando.</Say><Connect>');
    expect((await inboundEvents('test')).at(-1).data.customer_language).toBe('it');
  });

  it('refuses a request not signed by the connector\'s auth token (403), and a signature over another URL', async () => {
    const number = await register(test, { mode: 'new_call', customer_languages: ['es'] });
    const before = (await inboundEvents('test')).length;
    const forged = await callIn(number, { authToken: 'not-the-auth-token' }).ring();
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.twiml)).toEqual({ detail: 'invalid X-Twilio-Signature' });
    // Signed for the number's URL, sent to a step's: refused too.
    const res = await fetch(`${t.url}/twilio/voice/${number.id}/language/1`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': 'x' },
      body: 'Digits=1',
    });
    expect(res.status).toBe(403);
    expect(await inboundEvents('test')).toHaveLength(before);
  });

  it("the number's status callback ends the caller's leg as a dialled one's (call.phone.completed); a forged one is 403", async () => {
    const number = await register(test, { mode: 'new_call', customer_languages: ['es'] });
    const call = callIn(number);
    await call.ring();
    const [event] = (await inboundEvents('test')).filter((e) => e.data.twilio_call_sid === call.callSid);
    const forged = callIn(number, { authToken: 'not-the-auth-token' });
    expect((await forged.status(number.status_callback_url, 'completed')).status).toBe(403);
    expect((await call.status(number.status_callback_url, 'completed')).status).toBe(204);
    expect((await call.status(number.status_callback_url, 'completed')).status).toBe(204);
    const completed = (await t.server.app.db('events').where({ call_id: event.data.id, type: 'call.phone.completed' })).map((row) =>
      typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
    );
    expect(completed.map((e) => e.data)).toEqual([expect.objectContaining({ side: 'customer', twilio_call_sid: call.callSid, reason: 'completed' })]);
    const [leg] = await t.server.app.db('phone_legs').where({ call_id: event.data.id });
    expect(leg).toMatchObject({ status: 'completed', end_reason: 'completed' });
    // A caller never put through (no leg): nothing to do.
    expect((await callIn(number).status(number.status_callback_url, 'completed')).status).toBe(204);
  });

  it('an unknown or deleted number is told so and hung up', async () => {
    const number = await register(test, { mode: 'new_call', customer_languages: ['es'] });
    expect((await api(test, 'DELETE', `/v1/phone_numbers/${number.id}`)).status).toBe(204);
    const call = callIn(number);
    const answer = await call.ring();
    expect(answer.status).toBe(200);
    expect(answer.twiml).toBe(`${XML}<Response><Say language="en-US">This number is not in service. Goodbye.</Say><Hangup/></Response>`);
  });

  it('live mode: no balance and no interpretation engine are each told in the caller\'s language, then hung up; no call is made', async () => {
    const number = await register(live, { mode: 'new_call', customer_languages: ['es'] });
    const noEngine = await callIn(number).ring();
    expect(noEngine.twiml).toBe(
      `${XML}<Response><Say language="es-ES">Lo sentimos, la interpretación no está disponible en este momento. Inténtelo más tarde. Adiós.</Say><Hangup/></Response>`,
    );

    const broke = await t.createOrg({ balance: 0 });
    const brokeKey = (await t.createKey(broke, 'live')).key;
    await t.setTelephony(broke, { account_sid: twilio.accountSid, auth_token: twilio.authToken, from_number: '+15005550006' });
    const brokeNumber = await register(brokeKey, { mode: 'new_call', customer_languages: ['de'] });
    // An engine present (a stand-in nobody reaches: the call never starts).
    t.server.app.engines.replaceLive({ interpretation: { createInterpreter: () => { throw new Error('not reached'); } } as never });
    try {
      const noMoney = await callIn(brokeNumber).ring();
      expect(noMoney.twiml).toBe(
        `${XML}<Response><Say language="de-DE">Leider können wir im Moment keine Anrufe annehmen. Bitte versuchen Sie es später noch einmal. Auf Wiederhören.</Say><Hangup/></Response>`,
      );
    } finally {
      t.server.app.engines.replaceLive({ interpretation: { missingSetting: 'OPENAI_API_KEY' } });
    }
    expect(await t.server.app.db('calls').where({ org_id: broke })).toEqual([]);
    expect(await inboundEvents('live')).toEqual([]);
  });

  it('pin: the PIN prompt; a PIN joins its side of its call; three wrong PINs hang up; an ended call\'s PIN opens nothing', async () => {
    const number = await register(test, { mode: 'pin', customer_languages: ['es'] });
    const created = (await api(test, 'POST', '/v1/calls', { agent_language: 'en', customer_language: 'es', metadata: { ticket: 9 } })).body;
    const pins = created.phone_pins as { agent: string; customer: string };

    const caller = callIn(number);
    const prompt = await caller.ring();
    expect(prompt.twiml).toBe(
      `${XML}<Response><Gather input="dtmf" numDigits="6" finishOnKey="#" timeout="6" action="${number.voice_url}/pin/1" method="POST" actionOnEmptyResult="true">` +
        '<Say language="es-ES">Introduzca su PIN de seis dígitos.</Say></Gather></Response>',
    );
    const wrong = String((Number(pins.customer) + 1) % 1_000_000).padStart(6, '0');
    const retry = await caller.press(wrong === pins.agent ? '000000' : wrong);
    expect(retry.twiml).toBe(
      `${XML}<Response><Say language="es-ES">El PIN no es válido. Inténtelo de nuevo.</Say>` +
        `<Gather input="dtmf" numDigits="6" finishOnKey="#" timeout="6" action="${number.voice_url}/pin/2" method="POST" actionOnEmptyResult="true">` +
        '<Say language="es-ES">Introduzca su PIN de seis dígitos.</Say></Gather></Response>',
    );
    const joined = await caller.press(pins.agent);
    // The agent's side speaks English: the caller is connected in it.
    expect(joined.twiml).toContain(`<Say language="en-US">Please hold while we connect you.</Say><Connect><Stream url="wss://calls.example.com/media/twilio/ch_${created.id.replace(/^call_/, '')}_a">`);
    const [leg] = await t.server.app.db('phone_legs').where({ call_id: created.id });
    expect(leg).toMatchObject({ side: 'agent', direction: 'inbound', twilio_call_sid: caller.callSid });

    const guesser = callIn(number);
    await guesser.ring();
    await guesser.press('1');
    await guesser.press('');
    const third = await guesser.press('12345a');
    expect(third.twiml).toBe(`${XML}<Response><Say language="es-ES">El PIN no es válido. Adiós.</Say><Hangup/></Response>`);

    expect((await api(test, 'POST', `/v1/calls/${created.id}/end`, {})).status).toBe(200);
    // Ending the call hung up the phone that joined it by PIN.
    const { waitUntil } = await import('../support/waiting.js');
    await waitUntil(() => twilio.hungUp.includes(caller.callSid), 'the PIN caller hung up through the REST API');
    const late = callIn(number);
    await late.ring();
    expect((await late.press(pins.customer)).twiml).toContain('<Say language="es-ES">El PIN no es válido. Inténtelo de nuevo.</Say>');
  });
});
