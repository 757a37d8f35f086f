// Every event the server emits, as a stream delivers it, validates against the contract's `Event`
// schema (the member its `type` names), and every type in the contract is seen: the flows below drive a
// real server over HTTP, WebSockets and Twilio's status callbacks through each change that emits one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InterpreterFactory } from '../../src/calls/media/interpreter.js';
import { contractSchemas } from '../support/contractSchemas.js';
import { backendName } from '../support/databases.js';
import { openEventStream, type EventStreamClient, type ReceivedEvent } from '../support/sse.js';
import { IncomingCall, startTwilioStandIn, twilioSignature, type TwilioStandIn } from '../support/standins/twilioStandIn.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { Listener, callApi, connect, listenUrl, sine, streamUrl } from '../media/support.js';

const PUBLIC = 'https://calls.example.com';

/** An engine that is never reached: the balance is empty before interpretation could start. */
const unreachedInterpreter: InterpreterFactory = (opts) => {
  opts.onStatus({ state: 'connected' });
  return { provenance: { engine: 'fake', model: 'fake-1' }, push() {}, async close() {} };
};

describe(`every emitted event validates against the contract (${backendName})`, () => {
  let t: TestServer;
  let twilio: TwilioStandIn;
  let testKey: string;
  let liveKey: string;
  let liveOrg: string;
  const streams: EventStreamClient[] = [];
  const { contract, problems } = contractSchemas();
  const mapping: Record<string, string> = Object.fromEntries(
    Object.entries<string>(contract.components.schemas.Event.discriminator.mapping).map(([type, ref]) => [type, ref.split('/').pop()!]),
  );

  beforeAll(async () => {
    twilio = await startTwilioStandIn();
    t = await startTestServer({ PUBLIC_BASE_URL: PUBLIC, TWILIO_API_BASE_URL: twilio.url, WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' });
    testKey = (await t.createKey(await t.createOrg({ name: 'Test Events' }), 'test')).key;
    liveOrg = await t.createOrg({ name: 'Live Events', balance: 5 });
    liveKey = (await t.createKey(liveOrg, 'live')).key;
    await t.setTelephony(liveOrg, { account_sid: twilio.accountSid, auth_token: twilio.authToken, from_number: '+15005550006' });
    t.server.app.engines.replaceLive({ interpretation: unreachedInterpreter });
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await t?.stop();
    await twilio?.close();
  });

  const send = async (key: string, method: string, path: string, body?: unknown, expected = [200, 201, 204]) => {
    const res = await fetch(`${t.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!expected.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : res.json();
  };
  const orgStream = async (key: string) => {
    const stream = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
    expect(stream.status).toBe(200);
    streams.push(stream);
    return stream;
  };
  const ofType = (stream: EventStreamClient, type: string, match: (event: ReceivedEvent) => boolean = () => true) =>
    stream.waitFor((event) => event.data.type === type && match(event));

  it("lists each member of Event once in its discriminator's mapping, under the member's own type", () => {
    const members = contract.components.schemas.Event.oneOf.map((member: { $ref: string }) => member.$ref.split('/').pop());
    expect(Object.values(mapping).sort()).toEqual([...members].sort());
    for (const [type, name] of Object.entries(mapping)) {
      const own = contract.components.schemas[name].allOf.find((part: { properties?: object }) => part.properties);
      expect(own.properties.type.enum, name).toEqual([type]);
    }
  });

  it('emits every type of the contract, each valid against its schema', async () => {
    const testEvents = await orgStream(testKey);
    const liveEvents = await orgStream(liveKey);
    const calls = callApi(t);

    // A webhook endpoint that never answers (nothing listens on port 1), disabled after three days of
    // failed deliveries: the server's clock is moved to each next attempt.
    const endpoint = await send(testKey, 'POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:1/hook', enabled_events: ['session.created'] });
    // A support chat, through every change it can make.
    const session = await send(testKey, 'POST', '/v1/sessions', { agent_language: 'en', metadata: { ticket: 42 } });
    const app = t.server.app;
    const wallClock = app.now;
    try {
      for (let attempts = 0; attempts < 100; attempts++) {
        await app.webhooks.tick();
        const [delivery] = await send(testKey, 'GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries`);
        if (delivery.status !== 'pending') break;
        const due = Date.parse(delivery.next_attempt_at);
        app.now = () => due;
      }
      await ofType(testEvents, 'webhook_endpoint.disabled');
    } finally {
      app.now = wallClock;
    }
    await send(testKey, 'POST', `/v1/sessions/${session.id}/messages`, { sender: 'customer', text: 'Hei, tilaukseni on myöhässä. Voitteko auttaa minua?' });
    await send(testKey, 'POST', `/v1/sessions/${session.id}/typing`, { sender: 'agent' });
    await send(testKey, 'POST', `/v1/sessions/${session.id}/customer-link`, {});
    await send(testKey, 'POST', `/v1/sessions/${session.id}/close`, {});
    await send(testKey, 'DELETE', `/v1/sessions/${session.id}`);
    await ofType(testEvents, 'session.deleted');

    // A call: joined, settings, the customer leaves, a new link and line, ended.
    const call = await calls.createCall(testKey, { metadata: { ticket: 43 } });
    await calls.join(call.id, call.agentKey);
    await calls.setLanguage(call.id, call.customerKey, 'fi');
    expect((await calls.side(`/${call.id}/end`, call.customerKey, { method: 'POST' })).status).toBe(200);
    await send(testKey, 'POST', `/v1/calls/${call.id}/link`, { side: 'customer' });
    await send(testKey, 'POST', `/v1/calls/${call.id}/phone-line`, { side: 'customer' });
    await send(testKey, 'POST', `/v1/calls/${call.id}/end`, {});
    await ofType(testEvents, 'call.ended');

    // A call's transcript: one turn of speech (test mode's placeholder: a second of tone, then silence), then the end.
    const spoken = await calls.createCall(testKey, { customer_language: 'fi', metadata: { ticket: 44 } });
    const speakerMic = await connect(streamUrl(t, await calls.join(spoken.id, spoken.agentKey)));
    speakerMic.send(sine(24_000, 24_000, 440));
    speakerMic.send(Buffer.alloc(28_800));
    await ofType(testEvents, 'call.utterance');
    await send(testKey, 'POST', `/v1/calls/${spoken.id}/end`, {});
    await ofType(testEvents, 'call.transcript.ready');
    speakerMic.close();

    // A dialled phone's progress, from Twilio's signed status callbacks (live mode: test mode cannot dial).
    const dialled = await calls.createCall(liveKey, { customer_language: 'fi' });
    const spent = await calls.createCall(liveKey, { customer_language: 'fi' });
    const { twilio_call_sid: sid } = await send(liveKey, 'POST', `/v1/calls/${dialled.id}/dial`, { to: '+358401234567' });
    const [leg] = await t.server.app.db('phone_legs').where({ call_id: dialled.id });
    for (const status of ['ringing', 'in-progress', 'busy']) {
      const params = { AccountSid: twilio.accountSid, CallSid: sid, CallStatus: status };
      const res = await fetch(`${t.url}/twilio/status/${leg.id}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'X-Twilio-Signature': twilioSignature(twilio.authToken, `${PUBLIC}/twilio/status/${leg.id}`, params),
        },
        body: new URLSearchParams(params).toString(),
      });
      expect(res.status).toBe(204);
    }
    await ofType(liveEvents, 'call.phone.completed');

    // Someone calls one of the organization's numbers: a new call, announced for routing.
    const number = await send(liveKey, 'POST', '/v1/phone_numbers', { number: '+14155550100', mode: 'new_call', agent_language: 'en', customer_languages: ['es'] });
    expect((await new IncomingCall(twilio, { voiceUrl: number.voice_url, serverUrl: t.url, from: '+34600000001', to: number.number }).ring()).status).toBe(200);
    await ofType(liveEvents, 'call.inbound');

    // A live call whose prepaid balance is spent: interpretation stops the moment a side speaks.
    await t.admin.POST('/admin/orgs/{org_id}/credit', { params: { path: { org_id: liveOrg } }, body: { amount: -5 } });
    const customer = await calls.join(spent.id, spent.customerKey);
    const agent = await calls.join(spent.id, spent.agentKey);
    const hears = await Listener.open(listenUrl(t, customer));
    const mic = await connect(streamUrl(t, agent));
    await ofType(liveEvents, 'call.balance_exhausted', (event) => event.data.data.id === spent.id);
    mic.close();
    hears.close();

    const received = [...testEvents.events, ...liveEvents.events];
    const invalid = received
      .map((event) => {
        const schema = mapping[event.data.type];
        if (!schema) return { type: event.data.type, problems: ['no schema in the contract for this type'] };
        // Its own member first (clear messages), then the union (exactly one member matches).
        const own = problems(schema, event.data);
        return { type: event.data.type, problems: own.length ? own : problems('Event', event.data) };
      })
      .filter((result) => result.problems.length);
    expect(invalid).toEqual([]);
    // The SSE framing agrees with the payload: the event name is its type, the id its id (none for typing).
    for (const event of received) {
      expect(event.event).toBe(event.data.type);
      expect(event.id).toBe(event.data.type === 'session.typing' ? null : event.data.id);
    }
    // Every type the contract lists was emitted and checked; none is left to be justified.
    const seen = new Set(received.map((event) => event.data.type));
    expect(Object.keys(mapping).filter((type) => !seen.has(type))).toEqual([]);
    // And each event carries the metadata of its call or session.
    expect(testEvents.events.find((e) => e.data.type === 'session.deleted')!.data.metadata).toEqual({ ticket: 42 });
    expect(testEvents.events.find((e) => e.data.type === 'call.line_replaced')!.data.metadata).toEqual({ ticket: 43 });
  });
});
