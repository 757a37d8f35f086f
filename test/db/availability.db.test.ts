// A database that is stalled, gone or too slow: requests get 503 with Retry-After within the configured
// timeouts (instead of hanging for a minute or answering 500), and the server recovers by itself.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../src/db/errors.js';
import { waitUntil } from '../support/waiting.js';
import { backendName } from '../support/databases.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

// Small on purpose: the tests wait for them to pass.
const TIMEOUTS = { DB_STATEMENT_TIMEOUT_MS: '500', DB_CONNECT_TIMEOUT_MS: '500', DB_ACQUIRE_TIMEOUT_MS: '1000' };

async function expectUnavailable(res: Response): Promise<void> {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
  expect((await res.json()).detail).toMatch(/^the database is unavailable or too slow \(.+\); retry after 5 seconds$/);
}

describe(`database availability (${backendName})`, () => {
  if (backendName === 'postgres') {
    let t: TestServer;
    let proxy: TcpProxy;
    let key: string;
    let directUrl: string;
    const account = () => fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } });
    const answersAgain = () => waitUntil(async () => (await account()).status === 200, 'the database to serve again');

    beforeAll(async () => {
      const server = new URL(process.env.TEST_DATABASE_URL!);
      proxy = new TcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
      await proxy.start();
      t = await startTestServer(TIMEOUTS, {
        databaseUrl: (url) => {
          directUrl = url;
          const proxied = new URL(url);
          proxied.port = String(proxy.port);
          return proxied.toString();
        },
      });
      key = (await t.createKey(await t.createOrg(), 'test')).key;
    });
    afterAll(async () => {
      await t?.stop();
      await proxy?.kill();
    });

    it('answers 503 with Retry-After while the database is stalled, and serves again when it answers', async () => {
      expect((await account()).status).toBe(200);
      proxy.pause();
      await expectUnavailable(await account());
      expect((await fetch(`${t.url}/readyz`)).status).toBe(503);
      proxy.resume();
      await answersAgain();
    });

    it('answers 503 with Retry-After while the database is unreachable, and recovers when it is back', async () => {
      await proxy.kill();
      await expectUnavailable(await account());
      await proxy.start();
      await answersAgain();
    });

    it('gives up on a statement blocked by a lock after the statement timeout, with 503', async () => {
      const locker = new pg.Client({ connectionString: directUrl });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query('lock table api_keys in access exclusive mode');
        await expectUnavailable(await account());
      } finally {
        await locker.query('rollback');
        await locker.end();
      }
      expect((await account()).status).toBe(200);
    });
  } else {
    let t: TestServer;
    let key: string;
    beforeAll(async () => {
      t = await startTestServer(TIMEOUTS);
      key = (await t.createKey(await t.createOrg(), 'test')).key;
    });
    afterAll(() => t?.stop());

    it('answers 503 with Retry-After when the single connection stays busy past the acquire timeout', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let holding!: () => void;
      const taken = new Promise<void>((resolve) => (holding = resolve));
      const transaction = t.server.app.db.transaction(async () => {
        holding();
        await held;
      });
      await taken;
      try {
        await expectUnavailable(await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } }));
      } finally {
        release();
        await transaction;
      }
      expect((await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    });
  }
});
