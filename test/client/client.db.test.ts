// The typed client (client/) against the real server: REST typed end to end with the API's errors,
// the event stream resumed after a drop with heartbeats skipped, and a machine side of a test-mode call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient, joinCall, parseCallLink, unwrap, type Event, type ListenMessage } from '../../client/src/index.js';
import { pattern } from '../media/support.js';
import { backendName } from '../support/databases.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`typed client (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  beforeAll(async () => {
    // Heartbeats as often as the server allows, so that a stream sees several between events.
    t = await startTestServer({ SSE_HEARTBEAT_MS: '100' });
    key = (await t.createKey(await t.createOrg({ name: 'Client Org' }), 'test')).key;
  });
  afterAll(() => t?.stop());

  it('calls REST operations typed, and surfaces the API error body', async () => {
    const api = createClient({ baseUrl: `${t.url}/`, apiKey: key });
    const account = await unwrap(api.GET('/v1/account'));
    expect(account).toMatchObject({ org_name: 'Client Org', mode: 'test' });

    // Only the required field: the server's defaults apply.
    const call = await unwrap(api.POST('/v1/calls', { body: { agent_language: 'en' } }));
    expect(call).toMatchObject({ status: 'open', video: true, livemode: false, agent_language: 'en' });

    const missing = await api.GET('/v1/calls/{call_id}', { params: { path: { call_id: 'call_doesNotExist1' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({ detail: 'call not found' });

    const refused = await unwrap(api.POST('/v1/calls', { body: { agent_language: 'x' } })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 422, body: { detail: [{ loc: ['body', 'agent_language'], type: 'minLength' }] } });

    const anonymous = await unwrap(createClient({ baseUrl: t.url }).GET('/v1/account')).catch((error: unknown) => error);
    expect(anonymous).toMatchObject({ status: 401, body: { detail: expect.stringMatching(/^missing API key/) } });
  });

  it('iterates typed events, skips heartbeats, and resumes with Last-Event-ID after a drop', async () => {
    const proxy = new TcpProxy({ host: '127.0.0.1', port: Number(new URL(t.url).port) });
    await proxy.start();
    let raw = '';
    // Woken whenever more of the stream's bytes arrive.
    let rawGrew: Array<() => void> = [];
    const rawUntil = async (holds: (text: string) => boolean) => {
      while (!holds(raw)) await new Promise<void>((resolve) => rawGrew.push(resolve));
    };
    const opened: Array<() => void> = [];
    const whenOpen = () => new Promise<void>((resolve) => opened.push(resolve));
    const drops: unknown[] = [];
    // The stream's bytes as they arrive, to see the heartbeats the iterator must skip.
    const tee: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!response.body) return response;
      const [mine, theirs] = response.body.tee();
      void (async () => {
        const decoder = new TextDecoder();
        try {
          for await (const chunk of theirs) {
            raw += decoder.decode(chunk, { stream: true });
            const waiting = rawGrew;
            rawGrew = [];
            for (const wake of waiting) wake();
          }
        } catch {
          // the connection dropped
        }
      })();
      return new Response(mine, { status: response.status, headers: response.headers });
    };
    const controller = new AbortController();
    const events = createClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, apiKey: key, fetch: tee }).events({
      signal: controller.signal,
      retryMs: 10,
      onOpen: () => opened.shift()?.(),
      onReconnect: (error) => drops.push(error),
    });
    const api = createClient({ baseUrl: t.url, apiKey: key });
    try {
      const first = whenOpen();
      const next = events.next();
      await first;
      // Heartbeats between opening and the first event.
      await rawUntil((text) => text.split(': heartbeat').length >= 3);
      const a = await unwrap(api.POST('/v1/sessions', { body: { agent_language: 'en', external_id: 'first' } }));
      const eventA = (await next).value as Event;
      expect(eventA).toMatchObject({ type: 'session.created', livemode: false, data: { id: a.id } });

      // The connection drops; while it is down an event happens; the stream comes back and gets it.
      await proxy.kill();
      const b = await unwrap(api.POST('/v1/sessions', { body: { agent_language: 'en', external_id: 'second' } }));
      const reopened = whenOpen();
      await proxy.start();
      const eventB = (await events.next()).value as Event;
      await reopened;
      expect(drops.length).toBeGreaterThan(0);
      expect(eventB).toMatchObject({ type: 'session.created', data: { id: b.id } });
      expect(eventB.id).not.toBe(eventA.id);

      // And it goes on live after the resume.
      const c = await unwrap(api.POST('/v1/sessions', { body: { agent_language: 'en', external_id: 'third' } }));
      expect((await events.next()).value).toMatchObject({ type: 'session.created', data: { id: c.id } });
    } finally {
      controller.abort();
      await events.return(undefined);
      await proxy.kill();
    }
  });

  it('ends the event iteration with the API error when the stream is refused', async () => {
    const readOnly = (await t.createKey(await t.createOrg(), 'test', ['calls:read'])).key;
    const refused = await createClient({ baseUrl: t.url, apiKey: readOnly }).events().next().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 403, body: { detail: 'missing scope: events:read' } });
  });

  it('plays a machine side of a test-mode call: join, stream PCM16, hear WAV chunks back, see the end', async () => {
    const api = createClient({ baseUrl: t.url, apiKey: key });
    const call = await unwrap(api.POST('/v1/calls', { body: { agent_language: 'en', video: false } }));
    // The links name PUBLIC_BASE_URL; this server listens on a port of its own choosing.
    const link = parseCallLink(call.customer_url);
    expect(link).toMatchObject({ callId: call.id, callKey: expect.stringMatching(/^ck_/) });
    const customer = await joinCall({ ...link, baseUrl: t.url });
    expect(customer.info).toMatchObject({ role: 'customer', ready: false, stream: null });
    await customer.update({ language: 'fi' });
    expect(customer.info).toMatchObject({ ready: true, my_language: 'fi', other_language: 'en' });

    const wrongKey = await joinCall({ ...link, baseUrl: t.url, callKey: 'ck_wrong' }).catch((error: unknown) => error);
    expect(wrongKey).toMatchObject({ status: 401, body: { detail: 'missing or invalid X-Call-Key for this call' } });

    const agent = await joinCall({ ...parseCallLink(call.agent_url), baseUrl: t.url });
    expect(agent.info).toMatchObject({ role: 'agent', ready: true, my_language: 'en', other_language: 'fi' });

    // Test mode: each side hears its own voice back.
    const hears = await customer.listen();
    const mic = await customer.openStream('client-test');
    const voice = pattern(24_000 + 4_800, 7_000); // 1.2 s: sent as a 1 s frame and a 0.2 s frame
    mic.send(voice);

    const received: ListenMessage[] = [];
    let heardBytes = 0;
    for await (const message of hears) {
      received.push(message);
      if (message.type === 'audio') heardBytes += message.pcm.length;
      if (heardBytes >= voice.length) break;
    }
    const audio = received.filter((m): m is Extract<ListenMessage, { type: 'audio' }> => m.type === 'audio');
    expect(Buffer.concat(audio.map((m) => m.pcm)).equals(voice)).toBe(true);
    for (const chunk of audio) expect(Buffer.from(chunk.wav.subarray(0, 4)).toString('latin1')).toBe('RIFF');

    // The agent ends the call: the customer's sockets close with 4000 after a call_ended notice.
    await unwrap(api.POST('/v1/calls/{call_id}/end', { params: { path: { call_id: call.id } } }));
    const after: ListenMessage[] = [];
    for await (const message of hears) after.push(message);
    expect(after).toContainEqual(expect.objectContaining({ type: 'notice', code: 'call_ended' }));
    expect(await hears.closed).toMatchObject({ code: 4000 });
    expect(await mic.closed).toMatchObject({ code: 4000 });
    expect((await customer.refresh()).status).toBe('ended');
  });
});
