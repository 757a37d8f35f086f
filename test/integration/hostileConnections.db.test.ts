// No connection can end the process: hostile connections of every kind, in a loop, against one server;
// then the server still answers, streams still work, and everything it held is let go.
// (vitest fails the run on an uncaught exception or unhandled rejection, so a crash fails this file.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalRevocationBus } from '../../src/auth/revocation.js';
import { backendName } from '../support/databases.js';
import { garbage, h2cUpgrade, misbehave, rawRequest, webSocketUpgrade, type Ending } from '../support/hostile.js';
import { openEventStream } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { callApi, type Join } from '../media/support.js';
import { waitUntil } from '../support/waiting.js';

const ROUNDS = 12;

describe(`hostile connections (${backendName})`, () => {
  let t: TestServer;
  let key: string;
  let sessionId: string;
  let chatKey: string;
  let customer: Join;
  let lineId: string;

  beforeAll(async () => {
    // A fast heartbeat writes to dead connections often; short keep-alive and idle timeouts let
    // connections that say nothing go quickly.
    t = await startTestServer({ SSE_HEARTBEAT_MS: '100', HTTP_KEEP_ALIVE_TIMEOUT_MS: '500', HTTP_IDLE_TIMEOUT_MS: '300' });
    key = (await t.createKey(await t.createOrg({ name: 'Hostile Org' }), 'test')).key;
    const session = await (
      await fetch(`${t.url}/v1/sessions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ agent_language: 'en' }),
      })
    ).json();
    sessionId = session.id;
    chatKey = session.customer_url.split('#k=')[1];
    const calls = callApi(t);
    const call = await calls.createCall(key, { customer_language: 'fi' });
    customer = await calls.join(call.id, call.customerKey);
    const line = await (await calls.api(`/v1/calls/${call.id}/phone-line`, key, { method: 'POST', body: { side: 'agent' } })).json();
    lineId = line.audiosocket_id;
  });
  afterAll(() => t?.stop());

  /** Every kind of hostile connection once, ended after `delay` ms (0-2). */
  function oneRound(round: number, delay: number): Array<Promise<unknown>> {
    const http = t.server.port;
    const pbx = t.server.ports.audiosocket!;
    const auth = { Authorization: `Bearer ${key}` };
    const reset: Ending = { reset: delay };
    const uuid = Buffer.from(lineId.replace(/-/g, ''), 'hex');
    const streamPath = `${customer.stream!.path}?token=${encodeURIComponent(customer.stream!.token)}&source_id=s${round}`;
    const listenPath = `${customer.listen!.path}?unlock=${encodeURIComponent(customer.listen!.unlock)}`;
    const multipartHead = rawRequest('POST', `/v1/sessions/${sessionId}/voice`, {
      ...auth,
      'Content-Type': 'multipart/form-data; boundary=XyZ',
      'Content-Length': 200_000,
    });
    return [
      // Upgrades to a protocol we do not speak, reset at once: plain paths and every event stream.
      misbehave(http, [rawRequest('GET', '/healthz', h2cUpgrade())], reset),
      misbehave(http, [rawRequest('GET', '/v1/events', h2cUpgrade(auth))], reset),
      misbehave(http, [rawRequest('GET', `/v1/sessions/${sessionId}/stream`, h2cUpgrade(auth))], reset),
      misbehave(http, [rawRequest('GET', `/chat/public/${sessionId}/stream`, h2cUpgrade({ 'X-Chat-Key': chatKey }))], reset),
      // ... and the same streams reset only once they have begun.
      misbehave(http, [rawRequest('GET', '/v1/events', h2cUpgrade(auth))], { resetAfterAnswer: true }),
      misbehave(http, [rawRequest('GET', `/chat/public/${sessionId}/stream`, h2cUpgrade({ 'X-Chat-Key': chatKey }))], { resetAfterAnswer: true }),
      misbehave(http, [rawRequest('GET', '/v1/events', auth)], { resetAfterAnswer: true }),
      // An upgrade whose body never completes, a chunked one cut off, an unknown protocol.
      misbehave(http, [rawRequest('POST', '/v1/translate', h2cUpgrade({ ...auth, 'Content-Type': 'application/json', 'Content-Length': 500 }), '{"target":')], reset),
      misbehave(http, [rawRequest('POST', '/admin/orgs', h2cUpgrade({ 'Transfer-Encoding': 'chunked' }), '5\r\n{"na')], { finish: true }),
      misbehave(http, [rawRequest('GET', '/healthz', { Connection: 'Upgrade', Upgrade: `x-${garbage(round, 4).toString('hex')}` })], reset),
      // WebSocket upgrades to the media plane (valid secrets and not), to nowhere, malformed; reset.
      misbehave(http, [rawRequest('GET', streamPath, webSocketUpgrade())], reset),
      misbehave(http, [rawRequest('GET', streamPath, webSocketUpgrade())], { resetAfterAnswer: true }),
      misbehave(http, [rawRequest('GET', listenPath, webSocketUpgrade())], reset),
      misbehave(http, [rawRequest('GET', listenPath, webSocketUpgrade())], { resetAfterAnswer: true }),
      misbehave(http, [rawRequest('GET', `${customer.listen!.path}?unlock=wrong`, webSocketUpgrade())], reset),
      misbehave(http, [rawRequest('GET', '/nowhere', webSocketUpgrade())], reset),
      misbehave(http, [rawRequest('GET', listenPath, webSocketUpgrade({ 'Sec-WebSocket-Key': '' }))], reset),
      // Requests cut off: half-sent headers (reset, or ended), a body that stops half-way.
      misbehave(http, ['GET /v1/events HTTP/1.1\r\nHost: x\r\nAuthor'], reset),
      misbehave(http, ['POST /v1/translate HTTP/1.1\r\nHost: x\r\n'], { finish: true }),
      misbehave(http, [multipartHead, '--XyZ\r\nContent-Disposition: form-data; name="audio"; filename="a.webm"\r\n\r\n', garbage(round, 4_000)], reset),
      misbehave(http, [multipartHead, '--XyZ\r\nContent-Disposition: form-data; name="audio"\r\n\r\n', garbage(round, 2_000)], { finish: true }),
      misbehave(http, [rawRequest('POST', '/v1/translate', { ...auth, 'Content-Type': 'application/json', 'Content-Length': 10_000 }, '{"target":"fi","text":"')], reset),
      // Connections that say nothing, or stop half-way and wait, until the server closes them (the
      // idle or keep-alive timeout, a second or two: a few rounds show it).
      ...(round < 2
        ? [
            misbehave(http, [], { hold: true }),
            misbehave(http, ['POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{"ta'], { hold: true }),
          ]
        : []),
      // An upgrade pipelined behind a stream.
      misbehave(http, [rawRequest('GET', '/v1/events', auth), rawRequest('GET', '/healthz', h2cUpgrade())], { resetAfterAnswer: true }),
      // Garbage instead of HTTP.
      misbehave(http, [garbage(round + 1, 512)], reset),
      misbehave(http, [garbage(round + 2, 64)], { finish: true }),
      misbehave(http, [`GET / HTTP/1.1\r\nHost: x\r\n${garbage(round, 32).toString('latin1')}\r\n\r\n`], { finish: true }),
      // AudioSocket: garbage, a reset right after the UUID (joining or not), a cut-off message.
      misbehave(pbx, [garbage(round + 3, 300)], reset),
      misbehave(pbx, [Buffer.from([0x01, 0x00, 0x10]), uuid], reset),
      misbehave(pbx, [Buffer.from([0x01, 0x00, 0x10]), uuid, Buffer.from([0x10, 0x01, 0x40]), garbage(round, 100)], { finish: true }),
      misbehave(pbx, [Buffer.from([0x10, 0xff])], { finish: true }),
      misbehave(pbx, [], reset),
    ];
  }

  it('survives every kind of hostile connection, still answers, and holds nothing afterwards', async () => {
    for (let round = 0; round < ROUNDS; round++) await Promise.all(oneRound(round, round % 3));

    // Still answering, over plain HTTP and over an h2c upgrade.
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    const overUpgrade = await misbehave(t.server.port, [rawRequest('GET', '/healthz', h2cUpgrade({ Connection: 'Upgrade, HTTP2-Settings, close' }))], { finish: true });
    expect(overUpgrade.received.toString()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"ok"\}$/);
    // Streams still deliver.
    const stream = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
    expect(stream.status).toBe(200);
    await fetch(`${t.url}/v1/sessions/${sessionId}/typing`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ sender: 'agent' }),
    });
    await stream.waitFor((event) => event.event === 'session.typing');
    stream.close();

    // Everything the hostile connections opened is let go: sockets, streams, media, revocation watchers.
    const idle = async () => {
      const { httpConnections, eventStreams, transports } = await t.server.connectionStats();
      return httpConnections === 0 && eventStreams === 0 && Object.values(transports).every((open) => open === 0);
    };
    await waitUntil(idle, 'every connection to close').catch(async (err) => {
      throw new Error(`${err.message}: ${JSON.stringify(await t.server.connectionStats())}`);
    });
    expect((t.server.app.revocations as LocalRevocationBus).watcherCount()).toBe(0);
    const { rooms, endpoints } = t.server.media.stats();
    expect({ rooms, endpoints }).toEqual({ rooms: 0, endpoints: {} });
  });
});
