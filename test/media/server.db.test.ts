import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { misbehave, rawRequest, webSocketUpgrade } from '../support/hostile.js';
import { startTestServer, TEST_ADMIN_TOKEN } from '../support/testServer.js';
import { Listener, Pbx, callApi, connect, listenUrl, streamUrl, whenClosed } from './support.js';
import { waitUntil } from '../support/waiting.js';

/** A request carrying `Upgrade: h2c` (what `curl --http2` sends over plain HTTP). */
function h2cRequest(url: string, method: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method,
      headers: {
        Connection: 'Upgrade, HTTP2-Settings',
        Upgrade: 'h2c',
        'HTTP2-Settings': 'AAMAAABkAAQCAAAAAAIAAAAA',
        Authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
        ...(body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}),
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe(`media plane and the HTTP server (${backendName})`, () => {
  it('answers non-WebSocket upgrade requests (h2c) as plain HTTP/1.1, bodies included', async () => {
    const t = await startTestServer({ AUDIOSOCKET_PORT: '0' });
    try {
      expect(await h2cRequest(`${t.url}/healthz`, 'GET')).toMatchObject({ status: 200 });
      const created = await h2cRequest(`${t.url}/admin/orgs`, 'POST', JSON.stringify({ name: 'Over h2c' }));
      expect(created.status).toBe(201);
      expect(JSON.parse(created.body)).toMatchObject({ org_name: 'Over h2c' });
    } finally {
      await t.stop();
    }
  });

  it('stop() closes media sockets (1001) and hangs up phone lines before the database closes', async () => {
    const t = await startTestServer({ AUDIOSOCKET_PORT: '0' });
    const calls = callApi(t);
    const key = (await t.createKey(await t.createOrg(), 'test')).key;
    const call = await calls.createCall(key, { customer_language: 'fi' });
    const line = await (await calls.api(`/v1/calls/${call.id}/phone-line`, key, { method: 'POST', body: { side: 'agent' } })).json();
    const customer = await calls.join(call.id, call.customerKey);
    const mic = await connect(streamUrl(t, customer));
    const ear = await Listener.open(listenUrl(t, customer));
    const pbx = await Pbx.connect(t.server.ports.audiosocket!);
    pbx.sendUuid(line.audiosocket_id);
    await waitUntil(() => (t.server.media.room(call.id)?.stats().endpoints.line ?? 0) === 1, 'the line');
    const micClosed = whenClosed(mic);
    await t.stop();
    expect(await micClosed).toEqual({ code: 1001, reason: 'server shutting down' });
    expect(await ear.closed).toEqual({ code: 1001, reason: 'server shutting down' });
    await pbx.ended;
    expect(pbx.messages.at(-1)?.kind).toBe(0x00);
  });

  it('answers a WebSocket upgrade whose target is not a URL as an unknown media endpoint (404), never a 500', async () => {
    const t = await startTestServer();
    try {
      for (const target of ['http://[/media/stream/x', 'http://a:99999/media/listen/x']) {
        const { received } = await misbehave(t.server.port, [rawRequest('GET', target, webSocketUpgrade())], { finish: true });
        const [head, body] = received.toString().split('\r\n\r\n');
        expect(head).toMatch(/^HTTP\/1\.1 404 /);
        expect(JSON.parse(body).detail).toMatch(/^no such media endpoint/);
      }
    } finally {
      await t.stop();
    }
  });
});
