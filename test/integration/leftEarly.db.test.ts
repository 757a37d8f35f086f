// A client that leaves while its request is still being read or authenticated must not hold back its
// organization's events: the events of a request wait until its answer is sent (or the client is gone),
// and later ones wait behind them, so a request whose client had already gone before it got that far
// would otherwise keep every later event of the organization from every stream, for good.
// PostgreSQL only: the test holds the request in authentication with a table lock, which PGlite's single
// connection cannot wait on beside other statements.
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { openEventStream } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe.skipIf(backendName !== 'postgres')('a client that leaves before its request is handled', () => {
  let t: TestServer;
  /** The server's log lines as they are written. */
  const log = new EventEmitter();

  beforeAll(async () => {
    t = await startTestServer({}, { logLevel: 'info', logDestination: { write: (line: string) => void log.emit('line', JSON.parse(line)) } });
  });
  afterAll(() => t?.stop());

  /** The first `event` of `emitter` whose argument matches, waited for as it happens. */
  const first = <T>(emitter: EventEmitter, event: string, match: (value: T) => boolean): Promise<T> =>
    new Promise((resolve) => {
      const listener = (value: T) => {
        if (!match(value)) return;
        emitter.off(event, listener);
        resolve(value);
      };
      emitter.on(event, listener);
    });

  it("does not hold back its organization's events", async () => {
    const org = await t.createOrg();
    const { key } = await t.createKey(org, 'test');
    const { key: unseenKey } = await t.createKey(org, 'test'); // not in the credential cache: authenticating it reads api_keys
    const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const session = await (await fetch(`${t.url}/v1/sessions`, { method: 'POST', headers: auth, body: JSON.stringify({ agent_language: 'en', customer_language: 'de' }) })).json();
    const messagesPath = `/v1/sessions/${session.id}/messages`;
    const db = t.server.app.db;

    // Authentication of the next request waits on this lock.
    const locker = await db.transaction();
    await locker.raw('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
    const authenticating = first<{ sql: string }>(db, 'query', (query) => /\bapi_keys\b/.test(query.sql));
    const left = first<{ msg?: string; req?: { url?: string } }>(log, 'line', (line) => line.msg === 'request aborted' && line.req?.url === messagesPath);
    const stored = new Promise<void>((resolve) => {
      const unsubscribe = t.server.app.events.subscribe((event) => {
        if (event.sessionId === session.id && event.payload.type === 'message.created') resolve(unsubscribe());
      });
    });
    const body = JSON.stringify({ sender: 'agent', text: 'Sent by a client that will not wait' });
    const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `POST ${messagesPath} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${unseenKey}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await authenticating; // sent, so waiting on the lock
    socket.destroy();
    await left; // the server saw the client go
    await locker.commit();
    // The request goes on without its client, stores the message and publishes its event (held back
    // for good before the fix: the test then times out here).
    await stored;
    expect((await db('messages').where({ session_id: session.id }).count({ n: '*' }))[0].n).toBe(1);

    const stream = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
    try {
      expect(stream.status).toBe(200);
      const later = await fetch(`${t.url}${messagesPath}`, { method: 'POST', headers: auth, body: JSON.stringify({ sender: 'agent', text: 'Hello later' }) });
      expect(later.status).toBe(201);
      const posted = await later.json();
      const event = await stream.waitFor((received) => received.data.type === 'message.created' && received.data.data.id === posted.id);
      expect(event.data.data.text).toBe('Hello later');
    } finally {
      stream.close();
    }
  });
});
