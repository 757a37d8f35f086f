// Hot statements marked `prepared` (src/db/prepared.ts): on PostgreSQL each is a named prepared
// statement of its connection, named after its SQL text, parsed once and reused; statements not
// marked stay unnamed. On PGlite the mark changes nothing: every statement is kept parsed by its text
// (src/db/pgliteStatements.ts, tested in pgliteStatements.db.test.ts). Answers are the same either way.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driverOptions, prepared } from '../../src/db/prepared.js';
import { openDatabase, WORKER_APPLICATION_NAME } from '../../src/db/database.js';
import { statement } from '../../src/db/statement.js';
import { backendName, createTestDatabase } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`prepared statements (${backendName})`, () => {
  let t: TestServer;
  let orgId: string;
  const db = () => t.server.app.db;

  beforeAll(async () => {
    t = await startTestServer();
    orgId = await t.createOrg({ name: 'Prepared' });
  });
  afterAll(() => t?.stop());

  it('names a marked statement after its text, and passes other options through', () => {
    const named = driverOptions('select 1', { prepare: true, rowMode: 'array' }, true);
    expect(named).toEqual({ rowMode: 'array', name: expect.stringMatching(/^s_[\w-]{27}$/) });
    expect(driverOptions('select 1', { prepare: true }, true)).toEqual({ name: named!.name });
    expect(driverOptions('select 2', { prepare: true }, true)!.name).not.toBe(named!.name);
    expect(driverOptions('select 1', { rowMode: 'array' }, true)).toEqual({ rowMode: 'array' });
    expect(driverOptions('select 1', undefined, true)).toBeUndefined();
    // A driver without named statements (PGlite) gets neither the mark nor a name.
    expect(driverOptions('select 1', { prepare: true, rowMode: 'array' }, false)).toEqual({ rowMode: 'array' });
  });

  it('prepares a marked statement once per connection and reuses it; leaves others unnamed', async () => {
    const read = (trx: Knex) => prepared(trx('organizations').where({ id: orgId })).first('name');
    await db().transaction(async (trx) => {
      // One connection for the whole transaction: what it has prepared is what pg_prepared_statements shows.
      const before = await preparedOn(trx);
      expect(await read(trx)).toEqual({ name: 'Prepared' });
      expect(await read(trx)).toEqual({ name: 'Prepared' });
      await trx('organizations').where({ id: orgId }).first('id'); // not marked
      const added = (await preparedOn(trx)).filter((statement) => !before.includes(statement));
      if (backendName === 'postgres') {
        expect(added).toEqual([expect.stringMatching(/^s_\S+ select "name" from "organizations" where "id" = \$1 limit \$2$/)]);
      } else {
        expect(added).toHaveLength(2);
        expect(added).toEqual(
          expect.arrayContaining([
            expect.stringMatching(/^pglite_\d+ select "id" from "organizations" where "id" = \$1 limit \$2$/),
            expect.stringMatching(/^pglite_\d+ select "name" from "organizations" where "id" = \$1 limit \$2$/),
          ]),
        );
      }
    });
  });

  it('runs a written statement alike in and out of a transaction, as a named statement of the connection', async () => {
    const nameOf = statement<{ name: string }>('SELECT name FROM organizations WHERE id = ?');
    expect(await nameOf.rows(db(), [orgId])).toEqual([{ name: 'Prepared' }]);
    expect(await nameOf.rows(db(), ['org_none'])).toEqual([]);
    await db().transaction(async (trx) => {
      expect(await nameOf.rows(trx, [orgId])).toEqual([{ name: 'Prepared' }]);
      const named = (await preparedOn(trx)).filter((text) => text.endsWith(' SELECT name FROM organizations WHERE id = $1'));
      expect(named).toHaveLength(1);
    });
  });

  it.skipIf(backendName !== 'postgres')('sends marked and written statements outside a transaction from the worker thread, inside one on its connection', async () => {
    const sql = "SELECT current_setting('application_name') AS app";
    const markedApp = async (db: Knex) => (await prepared(db.raw<{ rows: Array<{ app: string }> }>(sql))).rows[0]!.app;
    const written = statement<{ app: string }>(sql);
    expect(await markedApp(db())).toBe(WORKER_APPLICATION_NAME);
    expect(await written.rows(db(), [])).toEqual([{ app: WORKER_APPLICATION_NAME }]);
    expect((await db().raw<{ rows: Array<{ app: string }> }>(sql)).rows[0]!.app).not.toBe(WORKER_APPLICATION_NAME); // not marked
    await db().transaction(async (trx) => {
      expect(await markedApp(trx)).not.toBe(WORKER_APPLICATION_NAME);
      expect(await written.rows(trx, [])).not.toEqual([{ app: WORKER_APPLICATION_NAME }]);
    });
  });

  it.skipIf(backendName !== 'postgres')('prepares a statement again when a migration has changed the columns it reads', async () => {
    // A database of its own, used one statement at a time: its pool has one connection, reused.
    const testDatabase = await createTestDatabase();
    const own = await openDatabase({ ...testDatabase, dataDir: '/nonexistent' });
    const row = () => prepared(own.knex('probe').where({ id: 1 })).first();
    const written = statement<object>('SELECT * FROM probe WHERE id = ?');
    try {
      const rowInTransaction = () => own.knex.transaction((trx) => prepared(trx('probe').where({ id: 1 })).first());
      await own.knex.schema.createTable('probe', (table) => table.integer('id'));
      await own.knex('probe').insert({ id: 1 });
      // Outside a transaction the worker thread's connections prepare them; inside, knex's connection.
      expect(await row()).toEqual({ id: 1 });
      expect(await written.rows(own.knex, [1])).toEqual([{ id: 1 }]);
      expect(await rowInTransaction()).toEqual({ id: 1 });
      // Another instance's migration adds a column: `select *` would now answer with other columns.
      await own.knex.raw('alter table probe add column note text');
      expect(await row()).toEqual({ id: 1, note: null });
      expect(await written.rows(own.knex, [1])).toEqual([{ id: 1, note: null }]);

      // Inside a transaction the stale statement fails the transaction (503, try again) ...
      await expect(rowInTransaction()).rejects.toMatchObject({ code: '0A000' });
      // ... and the connection is replaced, so the next request is served.
      expect(await rowInTransaction()).toEqual({ id: 1, note: null });
      expect(await row()).toEqual({ id: 1, note: null });
    } finally {
      await own.close();
      await testDatabase.drop();
    }
  });

  async function preparedOn(trx: Knex): Promise<string[]> {
    const { rows } = await trx.raw<{ rows: Array<{ name: string; statement: string }> }>('select name, statement from pg_prepared_statements');
    return rows.map((row) => `${row.name} ${row.statement}`);
  }
});
