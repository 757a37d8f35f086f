// The HTTP server's own defences (src/http/connections.ts) on a bare server: deadlines, idle
// connections, JSON answers to what the parser refuses, and upgrades served as plain HTTP/1.1.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpServer, serveAsPlainHttp } from '../../src/http/connections.js';
import { waitUntil } from '../support/waiting.js';
import { h2cUpgrade, misbehave, rawRequest } from '../support/hostile.js';

const LONG = 600_000;
const servers: http.Server[] = [];

async function serve(
  limits: Partial<Record<'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs' | 'httpIdleTimeoutMs', number>>,
  handler: http.RequestListener = (req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => res.end(JSON.stringify({ method: req.method, url: req.url, upgrade: req.headers.upgrade ?? null, body })));
  },
): Promise<number> {
  const server = createHttpServer(
    handler,
    { httpHeadersTimeoutMs: LONG, httpRequestTimeoutMs: LONG, httpKeepAliveTimeoutMs: LONG, httpIdleTimeoutMs: LONG, ...limits },
    pino({ level: 'silent' }),
  );
  server.on('upgrade', (req, socket, head) => serveAsPlainHttp(server, req, socket, head));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Status line and JSON body of a raw answer. */
function answer(received: Buffer): { status: number; headers: string; body: unknown } {
  const text = received.toString();
  const split = text.indexOf('\r\n\r\n');
  return { status: Number(text.split(' ')[1]), headers: text.slice(0, split), body: JSON.parse(text.slice(split + 4)) };
}

/** A connection that sends `parts` and waits for the server to close it. */
const heldOpen = (port: number, parts: string[]) => misbehave(port, parts, { hold: true });

describe('HTTP server connections', () => {
  it('closes a connection that never sends anything (idle timeout)', async () => {
    const port = await serve({ httpIdleTimeoutMs: 200 });
    expect((await heldOpen(port, [])).received.length).toBe(0);
  });

  it('answers 408 in JSON when the headers do not arrive in time', async () => {
    const port = await serve({ httpHeadersTimeoutMs: 300, httpRequestTimeoutMs: 300 });
    const { received } = await heldOpen(port, ['GET /x HTTP/1.1\r\nHost: x\r\n']);
    expect(answer(received)).toMatchObject({ status: 408, body: { detail: 'the request did not arrive in time; send it again' } });
    expect(answer(received).headers).toMatch(/Content-Type: application\/json/);
  });

  it('answers 408 in JSON when a body stops half-way (request timeout)', async () => {
    const port = await serve({ httpHeadersTimeoutMs: 300, httpRequestTimeoutMs: 300 });
    const { received } = await heldOpen(port, [rawRequest('POST', '/x', { 'Content-Length': 100 }, 'abc')]);
    expect(answer(received)).toMatchObject({ status: 408 });
  });

  it('closes a connection whose body stalls for the idle timeout, before the request timeout', async () => {
    let requestClosed: (complete: boolean) => void = () => {};
    const closed = new Promise<boolean>((resolve) => (requestClosed = resolve));
    const port = await serve({ httpIdleTimeoutMs: 200 }, (req) => {
      req.resume();
      req.once('close', () => requestClosed(req.complete));
    });
    const { received } = await heldOpen(port, [rawRequest('POST', '/x', { 'Content-Length': 100 }, 'abc')]);
    expect(received.length).toBe(0);
    expect(await closed).toBe(false);
  });

  it('keeps a connection the server is still answering, however long it stays quiet', async () => {
    let answerNow: () => void = () => {};
    const answered = new Promise<void>((resolve) => (answerNow = resolve));
    const port = await serve({ httpIdleTimeoutMs: 200 }, (req, res) => {
      req.resume();
      void answered.then(() => res.end('late'));
    });
    const slow = misbehave(port, [rawRequest('GET', '/slow', { Connection: 'close' })], { hold: true });
    // A connection opened later and silent all along is closed by the idle timeout; the slow one,
    // quiet for longer, is still there to receive its answer.
    await heldOpen(port, []);
    answerNow();
    expect((await slow).received.toString()).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*late$/);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const port = await serve({ httpKeepAliveTimeoutMs: 200 });
    const { received } = await heldOpen(port, [rawRequest('GET', '/first', {})]);
    expect(received.toString()).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*"url":"\/first"/);
  });

  it('answers what the HTTP parser refuses with a JSON 400 or 431', async () => {
    const port = await serve({});
    const garbled = await heldOpen(port, ['\x16\x03\x01\x02\x00 not http\r\n\r\n']);
    expect(answer(garbled.received)).toEqual({ status: 400, headers: expect.any(String), body: { detail: 'malformed HTTP request' } });
    const huge = await heldOpen(port, [rawRequest('GET', '/x', { 'X-Big': 'a'.repeat(20_000) })]);
    expect(answer(huge.received)).toMatchObject({ status: 431, body: { detail: 'the request headers are too large' } });
  });

  it('serves an upgrade to a protocol it does not speak as plain HTTP/1.1: bodies of any framing, keep-alive', async () => {
    const port = await serve({});
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (data) => (text += data));
    const answers = (count: number) => waitUntil(() => (text.match(/HTTP\/1\.1 200 OK/g) ?? []).length === count);
    socket.write(rawRequest('POST', '/sized', h2cUpgrade({ 'Content-Length': 5 }), 'ab'));
    socket.write('cde');
    await answers(1);
    socket.write(rawRequest('POST', '/chunked', h2cUpgrade({ 'Transfer-Encoding': 'chunked' }), '3\r\nxyz\r\n0\r\n\r\n'));
    await answers(2);
    socket.write(rawRequest('GET', '/plain', {}));
    await answers(3);
    socket.destroy();
    const bodies = [...text.matchAll(/\{[^}]*\}/g)].map((match) => JSON.parse(match[0]));
    expect(bodies).toEqual([
      { method: 'POST', url: '/sized', upgrade: null, body: 'abcde' },
      { method: 'POST', url: '/chunked', upgrade: null, body: 'xyz' },
      { method: 'GET', url: '/plain', upgrade: null, body: '' },
    ]);
    expect(text).not.toMatch(/Connection: close/);
  });

  it('closes a connection that pipelines an upgrade behind an unfinished answer, once that answer is out', async () => {
    // The first answer ends only once the server has read the upgrade behind it: unfinished when it came.
    let upgradeRead: () => void = () => {};
    const upgraded = new Promise<void>((resolve) => (upgradeRead = resolve));
    const port = await serve({}, (req, res) => {
      req.resume();
      void upgraded.then(() => res.end(`answered ${req.url}`));
    });
    servers.at(-1)!.on('upgrade', () => upgradeRead());
    const { received } = await heldOpen(port, [rawRequest('GET', '/first', {}), rawRequest('GET', '/second', h2cUpgrade())]);
    expect(received.toString()).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*answered \/first$/);
  });

  it('keeps the other Connection options of an upgrade request, such as close', async () => {
    const port = await serve({});
    const { received } = await heldOpen(port, [rawRequest('GET', '/once', h2cUpgrade({ Connection: 'Upgrade, HTTP2-Settings, close' }))]);
    expect(received.toString()).toMatch(/\r\nConnection: close\r\n/);
  });

  it('tells a response served over an upgrade request that its client went away', async () => {
    let resolveClosed: () => void = () => {};
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    const port = await serve({}, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(': connected\n\n');
      res.once('close', resolveClosed);
    });
    await misbehave(port, [rawRequest('GET', '/stream', h2cUpgrade())], { resetAfterAnswer: true });
    await closed;
  });
});
