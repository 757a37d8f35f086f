// Hostile connections, below the level of well-formed requests: resets right after an upgrade request,
// half requests, lying Content-Lengths, smuggling attempts, garbage, huge headers, streams cut off.
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Random } from './random.js';
import type { Fixtures } from './requests.js';

export interface ConnectionOutcome {
  label: string;
  /** The status line's code, when the server answered before the connection ended. */
  status: number | undefined;
  /** The bytes the connection began with, for the report. */
  sent: string;
}

/** How long a connection is given to be answered before the fuzzer lets it go. */
const ANSWER_WAIT_MS = 1_500;

interface Plan {
  label: string;
  bytes: Buffer;
  /** When to cut the connection after writing: a reset after `resetAfterMs`, else a half-close and wait. */
  resetAfterMs?: number;
  /** Wait for the status line, then reset (a stream cut off by its client). */
  resetOnAnswer?: boolean;
}

const head = (lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');

function plans(random: Random, fixtures: Fixtures, host: string): Array<() => Plan> {
  const key = random.pick(fixtures.testKeys);
  const paths = ['/', '/healthz', '/v1/account', '/v1/events', `/v1/sessions/${fixtures.session.id}/stream`, `/chat/public/${fixtures.session.id}/stream`, '/media/stream/x', '/media/listen/x', '/docs'];
  const path = () => random.pick(paths);
  const auth = () => (random.chance(0.5) ? [`Authorization: Bearer ${key}`, `X-Chat-Key: ${fixtures.session.chatKey}`] : []);
  const wsKey = () => randomBytes(16).toString('base64');
  return [
    () => ({
      label: 'non-WebSocket upgrade (h2c), reset at once',
      bytes: head([`GET ${path()} HTTP/1.1`, `Host: ${host}`, 'Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA', ...auth()]),
      resetAfterMs: random.int(3),
    }),
    () => ({
      label: 'unknown upgrade, left open then reset',
      bytes: head([`GET ${path()} HTTP/1.1`, `Host: ${host}`, 'Connection: Upgrade', `Upgrade: ${random.pick(['foo', 'TLS/1.2', 'websocket2'])}`, ...auth()]),
      resetAfterMs: 20 + random.int(200),
    }),
    () => ({
      label: 'WebSocket upgrade to a path that has none, reset',
      bytes: head([`GET ${random.pick(['/v1/account', '/v1/events', '/', '/nowhere'])} HTTP/1.1`, `Host: ${host}`, 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${wsKey()}`, ...auth()]),
      resetAfterMs: random.int(50),
    }),
    () => ({
      label: 'WebSocket upgrade to the media plane with a bogus token',
      bytes: head([`GET /media/${random.pick(['stream', 'listen'])}/${random.pick(['x', '%E0%A4%A', 'a'.repeat(3000)])}?token=${random.pick(['', 'x', '%00'])}&unlock=x&source_id=${random.pick(['', '%ZZ', 'y'.repeat(500)])} HTTP/1.1`, `Host: ${host}`, 'Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${wsKey()}`]),
      resetOnAnswer: random.chance(0.5),
    }),
    () => ({
      label: 'WebSocket upgrade with broken handshake headers',
      bytes: head([`GET /media/stream/x HTTP/1.1`, `Host: ${host}`, 'Connection: Upgrade', 'Upgrade: websocket', `Sec-WebSocket-Version: ${random.pick(['8', 'x', ''])}`, `Sec-WebSocket-Key: ${random.pick(['', 'short', wsKey()])}`]),
    }),
    () => ({ label: 'half a request line', bytes: Buffer.from(random.pick(['GET /v1/acc', 'POST', 'G', 'GET / HTTP/1.1\r\nHost: x\r\nX-Partial: ye'])) }),
    () => ({ label: 'headers never finished, reset', bytes: Buffer.from(`GET /v1/account HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\n`), resetAfterMs: 10 + random.int(100) }),
    () => ({
      label: 'body shorter than Content-Length',
      bytes: Buffer.concat([head([`POST /v1/translate HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`, 'Content-Type: application/json', `Content-Length: ${random.pick([100, 100_000, 2_000_000])}`]), Buffer.from('{"target":"fi"')]),
    }),
    () => ({
      label: 'body longer than Content-Length, then garbage',
      bytes: Buffer.concat([head([`POST /v1/translate HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`, 'Content-Type: application/json', 'Content-Length: 5']), Buffer.from('{"target":"fi","text":"x"}\x00\xff garbage')]),
    }),
    () => ({
      label: 'invalid Content-Length',
      bytes: head([`POST /v1/sessions HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`, 'Content-Type: application/json', ...random.pick([['Content-Length: -1'], ['Content-Length: abc'], ['Content-Length: 5', 'Content-Length: 6'], ['Content-Length: 99999999999999999999']])]),
    }),
    () => ({
      label: 'Content-Length and Transfer-Encoding together',
      bytes: Buffer.concat([head([`POST /v1/sessions HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`, 'Content-Type: application/json', 'Content-Length: 4', 'Transfer-Encoding: chunked']), Buffer.from('0\r\n\r\nGET /admin/orgs HTTP/1.1\r\n\r\n')]),
    }),
    () => ({
      label: 'broken chunked encoding',
      bytes: Buffer.concat([head([`POST /v1/sessions HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked']), Buffer.from(random.pick(['zz\r\n{}\r\n0\r\n\r\n', '5\r\n{}\r\n', 'ffffffffffffffff\r\n{}'])) ]),
    }),
    () => ({
      label: 'gzip body that never ends',
      bytes: Buffer.concat([head([`POST /v1/sessions HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`, 'Content-Type: application/json', 'Content-Encoding: gzip', 'Transfer-Encoding: chunked']), Buffer.from('a\r\n\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\r\n', 'latin1')]),
      resetAfterMs: 50 + random.int(100),
    }),
    () => ({ label: 'garbage bytes', bytes: randomBytes(1 + random.int(2_000)) }),
    () => ({ label: 'wrong protocol version', bytes: head([`GET /healthz HTTP/${random.pick(['9.9', '0.9', '1.2', 'x'])}`, `Host: ${host}`]) }),
    () => ({ label: 'raw bytes in the path', bytes: Buffer.concat([Buffer.from('GET /v1/sessions/'), Buffer.from([0xc3, 0xa4, 0x00, 0xff, 0x7f]), Buffer.from(` HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\n\r\n`)]) }),
    () => ({ label: 'huge header', bytes: head([`GET /v1/account HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`, `X-Big: ${'b'.repeat(random.pick([20_000, 70_000]))}`]) }),
    () => ({ label: 'many headers', bytes: head([`GET /v1/account HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`, ...Array.from({ length: 3_000 }, (_, i) => `X-H${i}: v`)]) }),
    () => ({
      label: 'event stream cut off by its client',
      bytes: head([`GET ${random.pick(['/v1/events', `/v1/sessions/${fixtures.session.id}/stream`])} HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`, 'Accept: text/event-stream']),
      resetOnAnswer: true,
    }),
    () => ({
      label: 'customer stream cut off by its client',
      bytes: head([`GET /chat/public/${fixtures.session.id}/stream HTTP/1.1`, `Host: ${host}`, `X-Chat-Key: ${fixtures.session.chatKey}`]),
      resetOnAnswer: true,
    }),
    () => ({
      label: 'pipelined requests, reset',
      bytes: Buffer.concat(Array.from({ length: 20 }, () => head([`GET /v1/account HTTP/1.1`, `Host: ${host}`, `Authorization: Bearer ${key}`]))),
      resetAfterMs: random.int(5),
    }),
  ];
}

function attempt(port: number, plan: Plan): Promise<ConnectionOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(giveUp);
      socket.destroy();
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(received);
      resolve({ label: plan.label, status: match ? Number(match[1]) : undefined, sent: plan.bytes.subarray(0, 300).toString('latin1') });
    };
    const giveUp = setTimeout(finish, ANSWER_WAIT_MS);
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (plan.resetOnAnswer && /^HTTP\/1\.[01] \d{3}/.test(received)) {
        done = true;
        clearTimeout(giveUp);
        socket.resetAndDestroy();
        resolve({ label: plan.label, status: Number(received.slice(9, 12)), sent: plan.bytes.subarray(0, 300).toString('latin1') });
      }
    });
    socket.on('connect', () => {
      socket.write(plan.bytes);
      if (plan.resetAfterMs !== undefined) {
        setTimeout(() => {
          if (done) return;
          done = true;
          clearTimeout(giveUp);
          socket.resetAndDestroy();
          resolve({ label: plan.label, status: undefined, sent: plan.bytes.subarray(0, 300).toString('latin1') });
        }, plan.resetAfterMs);
      } else if (!plan.resetOnAnswer) {
        socket.end();
      }
    });
  });
}

/** `count` hostile connections, `parallel` at a time. */
export async function hostileConnections(base: URL, fixtures: Fixtures, random: Random, count: number, parallel = 8): Promise<ConnectionOutcome[]> {
  const makers = plans(random, fixtures, base.host);
  // Planned up front, so the seed alone decides what is sent, whatever the timing.
  const planned = Array.from({ length: count }, () => random.pick(makers)());
  const outcomes: ConnectionOutcome[] = [];
  const worker = async () => {
    for (let plan = planned.shift(); plan; plan = planned.shift()) outcomes.push(await attempt(Number(base.port), plan));
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return outcomes;
}
