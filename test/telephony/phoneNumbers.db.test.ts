// /v1/phone_numbers: registering the organization's Twilio numbers for inbound calls; live and test
// apart; the Voice URL under PUBLIC_BASE_URL; PINs on new calls while a `pin` number exists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const PUBLIC = 'https://calls.example.com';

describe(`phone numbers (${backendName})`, () => {
  let t: TestServer;
  let live: string;
  let test: string;
  let bare: string;
  beforeAll(async () => {
    t = await startTestServer({ PUBLIC_BASE_URL: PUBLIC });
    const orgId = await t.createOrg({ balance: 5 });
    live = (await t.createKey(orgId, 'live')).key;
    test = (await t.createKey(orgId, 'test')).key;
    await t.setTelephony(orgId, { account_sid: `AC${'0'.repeat(32)}`, auth_token: 'token-of-the-account', from_number: '+15005550006' });
    bare = (await t.createKey(await t.createOrg({ balance: 5 }), 'test')).key;
  });
  afterAll(async () => {
    await t?.stop();
  });

  const api = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${t.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('creates, lists, gets and deletes a number; the Voice URL is under PUBLIC_BASE_URL', async () => {
    const created = await api(test, 'POST', '/v1/phone_numbers', {
      number: '+14155550100',
      mode: 'new_call',
      agent_language: 'en',
      customer_languages: ['es', 'fr'],
      metadata: { queue: 'support' },
    });
    expect(created.status).toBe(201);
    const number = await created.json();
    expect(number).toEqual({
      id: expect.stringMatching(/^pn_[0-9A-Za-z]{16}$/),
      number: '+14155550100',
      mode: 'new_call',
      agent_language: 'en',
      agent_name: null,
      customer_languages: ['es', 'fr'],
      metadata: { queue: 'support' },
      voice_url: `${PUBLIC}/twilio/voice/${number.id}`,
      status_callback_url: `${PUBLIC}/twilio/voice/${number.id}/status`,
      livemode: false,
      created_at: expect.any(String),
    });
    expect(await (await api(test, 'GET', `/v1/phone_numbers/${number.id}`)).json()).toEqual(number);
    expect(await (await api(test, 'GET', '/v1/phone_numbers')).json()).toEqual([number]);

    // The other mode sees nothing of it.
    expect((await api(live, 'GET', `/v1/phone_numbers/${number.id}`)).status).toBe(404);
    expect(await (await api(live, 'GET', '/v1/phone_numbers')).json()).toEqual([]);
    expect((await api(live, 'DELETE', `/v1/phone_numbers/${number.id}`)).status).toBe(404);

    expect((await api(test, 'DELETE', `/v1/phone_numbers/${number.id}`)).status).toBe(204);
    const gone = await api(test, 'GET', `/v1/phone_numbers/${number.id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ detail: 'phone number not found' });
  });

  it('a number once per mode (409), in both modes apart', async () => {
    const body = { number: '+14155550101', mode: 'pin', agent_language: 'en' };
    expect((await api(test, 'POST', '/v1/phone_numbers', body)).status).toBe(201);
    const again = await api(test, 'POST', '/v1/phone_numbers', body);
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ detail: 'the number +14155550101 is registered already in this mode; delete it first' });
    const liveOne = await api(live, 'POST', '/v1/phone_numbers', body);
    expect(liveOne.status).toBe(201);
    expect((await liveOne.json()).livemode).toBe(true);
  });

  it('needs a telephony connector (400) and E.164 numbers, known modes and at most nine languages (422)', async () => {
    const none = await api(bare, 'POST', '/v1/phone_numbers', { number: '+14155550102', mode: 'new_call', agent_language: 'en' });
    expect(none.status).toBe(400);
    expect((await none.json()).detail).toMatch(/no telephony connector/);
    const bad = await api(test, 'POST', '/v1/phone_numbers', { number: '004915155', mode: 'queue', agent_language: 'en' });
    expect(bad.status).toBe(422);
    const locs = (await bad.json()).detail.map((issue: { loc: string[] }) => issue.loc.join('.'));
    expect(locs).toEqual(expect.arrayContaining(['body.number', 'body.mode']));
    const tenKeys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((x) => `${x}${x}`);
    const long = await api(test, 'POST', '/v1/phone_numbers', { number: '+14155550102', mode: 'new_call', agent_language: 'en', customer_languages: tenKeys });
    expect(long.status).toBe(422);
    expect((await long.json()).detail).toEqual([expect.objectContaining({ loc: ['body', 'customer_languages'], type: 'too_many_items' })]);
  });

  it("calls get a 6-digit PIN per side, shown once, while the mode has a pin number; the PIN dies with its call", async () => {
    // The live mode has a pin number (made above); a second org's test mode has none.
    const withPins = await (await api(live, 'POST', '/v1/calls', { agent_language: 'en', customer_language: 'es' })).json();
    expect(withPins.phone_pins).toEqual({ agent: expect.stringMatching(/^[0-9]{6}$/), customer: expect.stringMatching(/^[0-9]{6}$/) });
    expect(withPins.phone_pins.agent).not.toBe(withPins.phone_pins.customer);
    expect(await (await api(live, 'GET', `/v1/calls/${withPins.id}`)).json()).not.toHaveProperty('phone_pins');
    const stored = await t.server.app.db('call_phone_pins').where({ call_id: withPins.id });
    expect(stored).toHaveLength(2);
    expect(JSON.stringify(stored)).not.toContain(withPins.phone_pins.agent);

    const without = await (await api(bare, 'POST', '/v1/calls', { agent_language: 'en', customer_language: 'es' })).json();
    expect(without).not.toHaveProperty('phone_pins');

    expect((await api(live, 'POST', `/v1/calls/${withPins.id}/end`, {})).status).toBe(200);
    const { waitUntil } = await import('../support/waiting.js');
    await waitUntil(async () => (await t.server.app.db('call_phone_pins').where({ call_id: withPins.id })).length === 0, 'the PINs erased with the call');
  });
});
