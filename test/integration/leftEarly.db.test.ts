// A client that leaves while its request is still being read or authenticated must not hold back its
// organization's events: the events of a request wait until its answer is sent (or the client is gone),
// and later ones wait behind them, so a request whose client had already gone before it got that far
// would otherwise keep every later event of the organization from every stream, for good.
// PostgreSQL only: the test holds the request in authentication with a table lock, which PGlite's single
// connection cannot wait on beside other statements.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { openEventStream } from '../support/sse.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe.skipIf(backendName !== 'postgres')('a client that leaves before its request is handled', () => {
  let t: TestServer;
  const logged: Array<{ msg?: string; req?: { url?: string } }> = [];

  beforeAll(async () => {
    t = await startTestServer({}, {
      logLevel: 'info',
      logDestination: { write: (line: string) => void logged.push(JSON.parse(line)) },
    });
  });
  afterAll(() => t?.stop());

  const until = async (done: () => boolean | Promise<boolean>, what: string) => {
    for (const deadline = Date.now() + 20_000; !(await done()); ) {
      if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

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
    const body = JSON.stringify({ sender: 'agent', text: 'Sent by a client that will not wait' });
    const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(
      `POST ${messagesPath} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${unseenKey}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await until(async () => {
      const { rows } = await db.raw(`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%api_keys%'`);
      return rows[0].waiting > 0;
    }, 'the request to wait in authentication');
    socket.destroy();
    await until(() => logged.some((line) => line.msg === 'request aborted' && line.req?.url === messagesPath), 'the server to see the client leave');
    await locker.commit();
    // The request goes on without its client and stores the message (and its event).
    await until(async () => (await db('messages').where({ session_id: session.id }).count({ n: '*' }))[0].n === 1, 'the message');

    const stream = await openEventStream(`${t.url}/v1/events`, { Authorization: `Bearer ${key}` });
    try {
      expect(stream.status).toBe(200);
      const later = await fetch(`${t.url}${messagesPath}`, { method: 'POST', headers: auth, body: JSON.stringify({ sender: 'agent', text: 'Hello later' }) });
      expect(later.status).toBe(201);
      const posted = await later.json();
      const event = await stream.waitFor((received) => received.data.type === 'message.created' && received.data.data.id === posted.id, 10_000);
      expect(event.data.data.text).toBe('Hello later');
    } finally {
      stream.close();
    }
  });
});
