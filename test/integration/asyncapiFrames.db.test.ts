// The AsyncAPI document against the server's real frames: the document as served, then the media,
// signalling, Twilio and AudioSocket sockets and the event streams of a started server, each text frame
// the server sends validated against the messages the document says it sends on that channel, each
// close code and AudioSocket kind and error code looked up in it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { InterpreterFactory } from '../../src/calls/media/interpreter.js';
import { schemaValidator } from '../support/contractSchemas.js';
import { backendName } from '../support/databases.js';
import { openEventStream, type EventStreamClient } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { Listener, Pbx, callApi, listenUrl, pattern, streamUrl, wsBase, type Closed, type Join } from '../media/support.js';
import { waitUntil } from '../support/waiting.js';
import { TwilioClient } from '../media/twilioClient.js';

type Json = Record<string, any>;
type SignalJoin = Join & { signal: { path: string; token: string } | null };

/** Captions every push, so a live listener gets caption frames. */
const captioning: InterpreterFactory = (opts) => {
  opts.onStatus({ state: 'connected' });
  let pushed = 0;
  return {
    provenance: { engine: 'fake', model: 'fake-interpreter-1' },
    push(pcm) {
      opts.onAudio(pcm);
      pushed++;
      opts.onCaption({ final: pushed % 2 === 0, original: `said ${pushed}`, translated: `[${opts.targetLanguage}] said ${pushed}` });
    },
    async close() {},
  };
};

describe(`the AsyncAPI document against real frames (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let liveKey: string;
  let doc: Json;
  let payload: ReturnType<typeof schemaValidator>;
  let calls: ReturnType<typeof callApi>;
  const open: Array<{ close(): void }> = [];

  beforeAll(async () => {
    t = await startTestServer({ SSE_HEARTBEAT_MS: '100', TURN_URLS: 'turn:turn.example.org:3478', TURN_SECRET: 'asyncapi-frames-turn-secret' });
    key = (await t.createKey(await t.createOrg({ name: 'Frames' }), 'test')).key;
    liveKey = (await t.createKey(await t.createOrg({ name: 'Live Frames', balance: 10 }), 'live')).key;
    t.server.app.engines.replaceLive({ interpretation: captioning });
    calls = callApi(t);
    const res = await fetch(`${t.url}/asyncapi.json`);
    expect(res.status).toBe(200);
    doc = await res.json();
    payload = schemaValidator(doc, 'asyncapi.json');
  });
  afterAll(async () => {
    for (const socket of open) socket.close();
    await t?.stop();
  });

  const messageId = (ref: string) => ref.split('/').pop()!;
  /** The component messages an operation of `action` on `channel` names (all the channel's when it names none). */
  function messagesOf(channel: string, action: 'send' | 'receive'): Json[] {
    const refs = Object.values<Json>(doc.operations)
      .filter((operation) => operation.action === action && operation.channel.$ref === `#/channels/${channel}`)
      .flatMap((operation) => operation.messages ?? Object.values<Json>(doc.channels[channel].messages))
      .map((ref: Json) => messageId(ref.$ref));
    const channelMessages = doc.channels[channel].messages;
    return refs.map((id) => ({ id: messageId(channelMessages[id]?.$ref ?? `/${id}`) })).map(({ id }) => ({ id, ...doc.components.messages[id] }));
  }
  /** Text frames the server sent on `channel` that no message it sends there describes. */
  function undescribed(channel: string, frames: unknown[]): unknown[] {
    const sent = messagesOf(channel, 'send').filter((message) => message.payload.format !== 'binary');
    expect(sent.length).toBeGreaterThan(0);
    return frames.filter((frame) => !sent.some((message) => payload(`#/components/messages/${message.id}/payload`)(frame)));
  }
  const binarySent = (channel: string) => messagesOf(channel, 'send').some((message) => message.payload.format === 'binary');
  const closeListed = (channel: string, closed: Closed) =>
    doc.channels[channel]['x-close-codes'].some((entry: Json) => entry.code === closed.code && entry.reason === closed.reason);
  const track = <T extends { close(): void }>(socket: T) => (open.push(socket), socket);
  /** Sends a frame at each poll until `done`: audio sent before a side is admitted or interpreted is dropped. */
  const sendUntil = (send: () => void, done: () => boolean, what: string) =>
    waitUntil(() => {
      if (done()) return true;
      send();
      return false;
    }, what);
  const signalUrl = (join: SignalJoin) => `${wsBase(t)}${join.signal!.path}?token=${encodeURIComponent(join.signal!.token)}`;

  it('is served as JSON and YAML with this server as its servers, and rendered in /docs', async () => {
    const yaml = YAML.parse(await (await fetch(`${t.url}/asyncapi.yaml`)).text());
    expect(yaml).toEqual(doc);
    const host = new URL(t.server.app.config.publicBaseUrl).host;
    expect(doc.servers.api).toMatchObject({ host, protocol: 'ws' });
    expect(doc.servers.audiosocket.host).toBe(`${t.server.app.config.audioSocketHost}:${t.server.ports.audiosocket}`);
    const page = await fetch(`${t.url}/docs/asyncapi`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBeTruthy();
    const html = await page.text();
    for (const address of ['/media/stream/{channel_id}', '/media/listen/{channel_id}', '/media/signal/{channel_id}', '/v1/events', '/media/twilio/{channel_id}']) {
      expect(html).toContain(address);
    }
    expect(await (await fetch(`${t.url}/docs`)).text()).toContain('href="/docs/asyncapi"');
  });

  it('describes every frame and close of the stream and listen sockets (test mode)', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const agent = await calls.join(call.id, call.agentKey);
    const customer = await calls.join(call.id, call.customerKey);
    const agentHears = track(await Listener.open(listenUrl(t, agent)));
    const customerHears = track(await Listener.open(listenUrl(t, customer)));
    const mic = track(await Listener.open(streamUrl(t, agent)));
    mic.ws.send(pattern(480, 1));
    await agentHears.waitForBytes(960);
    expect(binarySent('mediaListen')).toBe(true);
    expect(agentHears.chunks[0].subarray(0, 4).toString()).toBe('RIFF');

    // Frames a stream socket refuses.
    const texting = await Listener.open(`${streamUrl(t, agent).replace(/source_id=[^&]*/, 'source_id=texting')}`);
    texting.ws.send('hello');
    const odd = await Listener.open(`${streamUrl(t, agent).replace(/source_id=[^&]*/, 'source_id=odd')}`);
    odd.ws.send(Buffer.alloc(3));
    const refusedCloses = [await texting.closed, await odd.closed];

    // The customer changes language (the agent's listener reconnects), hangs up (its own sockets go),
    // a new agent link (the agent's go), then the call ends for a listener opened with the new link.
    await calls.setLanguage(call.id, call.customerKey, 'sv');
    const reconnect = await agentHears.closed;
    expect((await calls.side(`/${call.id}/end`, call.customerKey, { method: 'POST' })).status).toBe(200);
    const left = await customerHears.closed;
    const agentAgain = track(await Listener.open(listenUrl(t, agent)));
    const { url } = (await (await calls.api(`/v1/calls/${call.id}/link`, key, { method: 'POST', body: { side: 'agent' } })).json()) as { url: string };
    const replaced = [await agentAgain.closed, await mic.closed];
    const rejoined = await calls.join(call.id, calls.keyOf(url));
    const lastListener = track(await Listener.open(listenUrl(t, rejoined)));
    expect((await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST', body: {} })).status).toBe(200);
    const ended = await lastListener.closed;

    const listenFrames = [agentHears, customerHears, agentAgain, lastListener].flatMap((listener) => listener.frames);
    expect(listenFrames.map((frame) => `${frame.type}:${frame.code ?? frame.engine}`)).toEqual(
      expect.arrayContaining(['provenance:test', 'notice:reconnect', 'notice:left', 'notice:link_replaced', 'notice:call_ended']),
    );
    expect(undescribed('mediaListen', listenFrames)).toEqual([]);
    expect([reconnect, left, replaced[0], ended].map((closed) => closed.code)).toEqual([4002, 4004, 4001, 4000]);
    for (const closed of [reconnect, left, replaced[0], ended]) expect(closeListed('mediaListen', closed), JSON.stringify(closed)).toBe(true);
    expect([...refusedCloses, replaced[1]].map((closed) => closed.code)).toEqual([1003, 1007, 4001]);
    for (const closed of [...refusedCloses, replaced[1]]) expect(closeListed('mediaStream', closed), JSON.stringify(closed)).toBe(true);
  });

  it('describes the captions and provenance of a live call, and the speaker\'s own captions on its signalling socket', async () => {
    const call = await calls.createCall(liveKey, { customer_language: 'fi' });
    const agent = (await calls.join(call.id, call.agentKey)) as SignalJoin;
    const customer = await calls.join(call.id, call.customerKey);
    const customerHears = track(await Listener.open(listenUrl(t, customer)));
    const agentSignal = track(await Listener.open(signalUrl(agent)));
    await agentSignal.waitForFrame((frame) => frame.type === 'peer');
    const mic = track(await Listener.open(streamUrl(t, agent)));
    await sendUntil(() => mic.ws.send(pattern(480, 7)), () => customerHears.frames.some((frame) => frame.type === 'caption' && frame.final), 'a final caption');
    expect(customerHears.frames.find((frame) => frame.type === 'provenance')).toEqual({ type: 'provenance', engine: 'fake', model: 'fake-interpreter-1' });
    expect(undescribed('mediaListen', customerHears.frames)).toEqual([]);
    const own = await agentSignal.waitForFrame((frame) => frame.type === 'caption' && frame.final);
    expect(own).toEqual(customerHears.frames.find((frame) => frame.type === 'caption' && frame.final));
    expect(undescribed('mediaSignal', agentSignal.frames)).toEqual([]);
    await calls.api(`/v1/calls/${call.id}/end`, liveKey, { method: 'POST', body: {} });
  });

  it('describes the signalling frames the server sends, and its closes', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const agent = (await calls.join(call.id, call.agentKey)) as SignalJoin;
    const customer = (await calls.join(call.id, call.customerKey)) as SignalJoin;
    // The sockets open on a clock the test then moves half the TURN credentials' lifetime on (fresh ones
    // come), and gives back.
    const wallClock = t.server.app.now;
    const clock = Date.now();
    let agentSignal: Listener;
    let customerSignal: Listener;
    try {
      t.server.app.now = () => clock;
      agentSignal = track(await Listener.open(signalUrl(agent)));
      customerSignal = track(await Listener.open(signalUrl(customer)));
      await agentSignal.waitForFrame((frame) => frame.type === 'peer' && frame.present);
      agentSignal.ws.send(JSON.stringify({ type: 'offer', sdp: 'v=0\r\n' }));
      agentSignal.ws.send(JSON.stringify({ type: 'candidate', candidate: { candidate: 'candidate:1 1 udp 1 127.0.0.1 5000 typ host', sdpMid: '0', sdpMLineIndex: 0 } }));
      agentSignal.ws.send(JSON.stringify({ type: 'candidate', candidate: null }));
      agentSignal.ws.send(JSON.stringify({ type: 'state', muted: false, camera: true, speaking: false }));
      await customerSignal.waitForFrame((frame) => frame.signal?.type === 'state');
      t.server.app.now = () => clock + t.server.app.config.turn!.ttlSeconds * 500;
      await customerSignal.waitForFrame((frame) => frame.type === 'ice_servers');
    } finally {
      t.server.app.now = wallClock;
    }
    customerSignal.ws.send(Buffer.from([1, 2]));
    const binary = await customerSignal.closed;
    const forger = await Listener.open(signalUrl(customer));
    forger.ws.send(JSON.stringify({ type: 'peer', present: false }));
    const forged = await forger.closed;
    await agentSignal.waitForFrame((frame) => frame.type === 'peer' && !frame.present);
    expect(customerSignal.frames.map((frame) => frame.type)).toEqual(['peer', 'peer_signal', 'peer_signal', 'peer_signal', 'peer_signal', 'ice_servers']);
    expect(undescribed('mediaSignal', [...agentSignal.frames, ...customerSignal.frames])).toEqual([]);
    expect([binary.code, forged.code]).toEqual([1003, 1008]);
    for (const closed of [binary, forged]) expect(closeListed('mediaSignal', closed), JSON.stringify(closed)).toBe(true);
    await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST', body: {} });
    expect(closeListed('mediaSignal', await agentSignal.closed)).toBe(true);
  });

  it('describes what the server sends a Twilio media stream, and how it closes it', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const customer = await calls.join(call.id, call.customerKey);
    const phone = await TwilioClient.open(`${wsBase(t)}/media/twilio/${customer.stream!.channel_id}`);
    track(phone.ws);
    phone.start({ token: customer.stream!.token });
    // Test mode: the phone hears its own voice back, as paced media with marks.
    await sendUntil(() => phone.media(Buffer.alloc(160, 0x7f)), () => phone.received.some((frame) => frame.event === 'mark'), 'a mark');
    expect(phone.received.some((frame) => frame.event === 'media')).toBe(true);
    expect(undescribed('twilioMediaStream', phone.received)).toEqual([]);
    await calls.api(`/v1/calls/${call.id}/end`, key, { method: 'POST', body: {} });
    const closed = await phone.closed;
    expect(closed.code).toBe(4000);
    expect(closeListed('twilioMediaStream', closed)).toBe(true);
  });

  it('describes the kinds and error codes the server sends on an AudioSocket line', async () => {
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const line = await (await calls.api(`/v1/calls/${call.id}/phone-line`, key, { method: 'POST', body: { side: 'customer' } })).json();
    const kinds: Json = Object.fromEntries(
      messagesOf('audioSocket', 'send').map((message) => [message['x-audiosocket-kind'], message]),
    );
    const errorCodes = doc.components.messages.AudioSocketError['x-audiosocket-codes'].map((entry: Json) => entry.code);

    const pbx = track(await Pbx.connect(t.server.ports.audiosocket!));
    pbx.sendUuid(line.audiosocket_id);
    await sendUntil(() => pbx.send(0x10, Buffer.alloc(320, 1)), () => pbx.audio().length > 0, 'audio back');
    // A newer line for the side hangs this one up.
    await calls.api(`/v1/calls/${call.id}/phone-line`, key, { method: 'POST', body: { side: 'customer' } });
    await pbx.ended;
    const stranger = track(await Pbx.connect(t.server.ports.audiosocket!));
    stranger.send(0x10, Buffer.alloc(320));
    await stranger.ended;

    for (const message of [...pbx.messages, ...stranger.messages]) {
      const described = kinds[message.kind];
      expect(described, `kind 0x${message.kind.toString(16)}`).toBeDefined();
      expect(message.payload.length).toBeLessThanOrEqual(described.payload.maxLength);
      if (message.kind === 0x10) expect(message.payload.length).toBe(320);
    }
    expect(pbx.messages.at(-1)!.kind).toBe(0x00);
    const refusal = stranger.messages.at(-1)!;
    expect([refusal.kind, refusal.payload.length]).toEqual([0xff, 1]);
    expect(errorCodes).toContain(refusal.payload[0]);
  });

  it('describes the event streams: framing, heartbeats, resume, and each event against its message', async () => {
    const session = await (await calls.api('/v1/sessions', key, { method: 'POST', body: { agent_language: 'en', metadata: { ticket: 9 } } })).json();
    const chatKey = session.customer_url.split('#k=')[1];
    const agentStream = track(await openEventStream(`${t.url}/v1/sessions/${session.id}/stream`, { Authorization: `Bearer ${key}` }));
    const chatStream = track(await openEventStream(`${t.url}/chat/public/${session.id}/stream`, { 'X-Chat-Key': chatKey }));
    await calls.api(`/v1/sessions/${session.id}/messages`, key, { method: 'POST', body: { sender: 'agent', text: 'Hello, how can I help?' } });
    await calls.api(`/v1/sessions/${session.id}/typing`, key, { method: 'POST', body: { sender: 'agent' } });
    await calls.api(`/v1/sessions/${session.id}/close`, key, { method: 'POST', body: {} });
    await agentStream.waitFor((event) => event.event === 'session.closed');
    await chatStream.waitFor((event) => event.event === 'session.closed');
    await waitUntil(() => agentStream.comments.includes('heartbeat'), 'a heartbeat');
    expect(agentStream.comments[0]).toBe('connected');

    const check = (stream: EventStreamClient, channel: string) => {
      const messages = Object.values<Json>(doc.channels[channel].messages).map((ref) => ({ id: messageId(ref.$ref), ...doc.components.messages[messageId(ref.$ref)] }));
      for (const event of stream.events) {
        // A message named as the event is, or the channel's one message for every type.
        const message = messages.find((candidate) => candidate.name === event.event) ?? (messages.length === 1 ? messages[0] : undefined);
        expect(message, `${channel}: ${event.event}`).toBeDefined();
        const validate = payload(`#/components/messages/${message!.id}/payload`);
        expect(validate(event.data), `${channel} ${event.event}: ${JSON.stringify(validate.errors)}`).toBe(true);
        expect(event.event).toBe(event.data.type);
        expect(event.id).toBe(event.data.type === 'session.typing' ? null : event.data.id);
      }
    };
    expect(agentStream.events.map((event) => event.event)).toEqual(['message.created', 'session.typing', 'session.closed']);
    check(agentStream, 'sessionEvents');
    expect(chatStream.events.map((event) => event.event)).toEqual(['message.created', 'session.typing', 'session.closed']);
    check(chatStream, 'chatEvents');

    // Last-Event-ID: the stored events after that one come first.
    const resumed = track(
      await openEventStream(`${t.url}/v1/sessions/${session.id}/stream`, { Authorization: `Bearer ${key}`, 'Last-Event-ID': agentStream.events[0].id! }),
    );
    await resumed.waitFor((event) => event.event === 'session.closed');
    expect(resumed.events.map((event) => event.event)).toEqual(['session.closed']);
    check(resumed, 'sessionEvents');
  });
});
