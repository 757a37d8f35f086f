// The tests' lent databases (test/support/databases.ts): a database a server gave back is lent to the next
// server of the worker as the migrated snapshot left it, with no row of the earlier server's and every
// sequence at its start; on PostgreSQL with the earlier server's statements thread, still connected. Each
// test file relies on it; here it is checked directly.
import { afterEach, describe, expect, it } from 'vitest';
import { WORKER_APPLICATION_NAME } from '../../src/db/database.js';
import { backendName } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe('a database given back and lent again', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  const db = () => server!.server.app.db;
  const databaseName = async () => (await db().raw('SELECT current_database() AS name')).rows[0].name as string;
  const usedSequences = async () =>
    (await db().raw(`SELECT sequencename FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL AND sequencename NOT LIKE 'knex_migrations%'`)).rows.map(
      (row: { sequencename: string }) => row.sequencename,
    );
  const tablesWithRows = async () => {
    const { rows } = await db().raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_migrations%'`);
    const filled: string[] = [];
    for (const { tablename } of rows as { tablename: string }[]) if ((await db()(tablename).first()) !== undefined) filled.push(tablename);
    return filled;
  };

  /** The backends of the statements thread's connections (PostgreSQL). */
  const threadBackends = async () =>
    (await db().raw('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ? ORDER BY pid', [WORKER_APPLICATION_NAME])).rows.map(
      (row: { pid: number }) => row.pid,
    );

  it('has no row of the server before and its sequences at their start', async () => {
    server = await startTestServer();
    const name = await databaseName();
    // A mark the emptying leaves alone: the next server must get this very database, or the test proves nothing.
    await db().raw(`COMMENT ON DATABASE "${name}" IS 'lent by lending.db.test.ts'`);
    const orgId = await server.createOrg();
    const { key } = await server.createKey(orgId, 'test');
    expect((await server.admin.POST('/admin/orgs/{org_id}/credit', { params: { path: { org_id: orgId } }, body: { amount: 5 } })).response.status).toBe(200);
    const api = server.client(key);
    const { data: session } = await api.POST('/v1/sessions', { body: { agent_language: 'en', customer_language: 'de' } });
    const posted = await api.POST('/v1/sessions/{session_id}/messages', { params: { path: { session_id: session!.id } }, body: { sender: 'agent', text: 'Hello' } });
    expect(posted.response.status).toBe(201);
    expect(await tablesWithRows()).toEqual(expect.arrayContaining(['organizations', 'api_keys', 'ledger_entries', 'sessions', 'messages', 'events']));
    expect(await usedSequences()).toEqual(expect.arrayContaining(['ledger_entries_id_seq', 'messages_id_seq', 'events_seq_seq']));
    const earlierInstances = await db()('instances').pluck('id');
    const lentBackends = backendName === 'postgres' ? await threadBackends() : [];
    if (backendName === 'postgres') expect(lentBackends.length).toBeGreaterThan(0);
    await server.stop();

    server = await startTestServer();
    expect(await databaseName()).toBe(name);
    const { rows } = await db().raw(`SELECT shobj_description(oid, 'pg_database') AS mark FROM pg_database WHERE datname = current_database()`);
    expect(rows[0].mark).toBe('lent by lending.db.test.ts');
    await db().raw(`COMMENT ON DATABASE "${name}" IS NULL`);
    // Only the new server's own row: an instance registers itself when it starts.
    expect(await tablesWithRows()).toEqual(['instances']);
    const instances = await db()('instances').pluck('id');
    expect(instances).toHaveLength(1);
    expect(earlierInstances).not.toContain(instances[0]);
    if (backendName === 'postgres') expect(await threadBackends()).toEqual(expect.arrayContaining(lentBackends));
    expect(await usedSequences()).toEqual([]);
  });
});
