// The embedded database in its worker thread (src/db/pgliteThread.ts): what crosses the thread boundary
// (values both ways, errors with their SQLSTATE), transactions, a main thread that stays free while a
// statement runs. A server that exits when the worker dies: test/integration/lifecycle.embedded.test.ts.
// PGlite's own: on the PGlite stage only, from the run's empty data directory (no initdb of its own).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { fromDatabaseError } from '../../src/db/errors.js';
import { backendName, createTestDatabase } from '../support/databases.js';

describe.skipIf(backendName !== 'pglite')('PGlite in a worker thread', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ dataDir: 'unused', memory: (await createTestDatabase()).memory });
    await db.knex.schema.createTable('items', (t) => {
      t.increments('id');
      t.text('name').notNullable().unique();
      t.binary('data');
      t.jsonb('doc');
      t.json('plain');
      t.timestamp('at', { useTz: true });
      t.bigInteger('big');
      t.specificType('tags', 'text[]');
      t.boolean('flag');
    });
  });
  afterAll(() => db?.close());

  it('carries every kind of value both ways', async () => {
    const at = new Date('2024-05-06T07:08:09.123Z');
    const data = Buffer.from([0, 1, 2, 254, 255]);
    const [row] = await db
      .knex('items')
      .insert({ name: 'all', data, doc: { a: [1, 'two', null] }, plain: JSON.stringify({ b: true }), at, big: 2 ** 40, tags: ['x', 'y"z'], flag: true })
      .returning('*');
    expect(row).toEqual({
      id: expect.any(Number),
      name: 'all',
      data, // a Buffer, as node-postgres reads bytea
      doc: { a: [1, 'two', null] },
      plain: { b: true },
      at,
      big: 2 ** 40,
      tags: ['x', 'y"z'],
      flag: true,
    });
    expect(Buffer.isBuffer(row.data)).toBe(true);
    const found = await db.knex('items').where({ at, data }).first('name');
    expect(found).toEqual({ name: 'all' });
    const { rows } = await db.knex.raw('select ?::int + 1 as n, ? as nothing', [41, null]);
    expect(rows).toEqual([{ n: 42, nothing: null }]);
  });

  it("hands on the database's errors with their code and constraint, which the error catalogue maps", async () => {
    await db.knex('items').insert({ name: 'taken' });
    const duplicate = await db.knex('items').insert({ name: 'taken' }).catch((err: unknown) => err);
    expect(duplicate).toBeInstanceOf(Error);
    expect(duplicate).toMatchObject({ code: '23505', constraint: 'items_name_unique', message: expect.stringContaining('duplicate key') });
    expect(fromDatabaseError(duplicate)).toMatchObject({ status: 409 });
    await expect(db.knex.raw('selec 1')).rejects.toMatchObject({ code: '42601' });
  });

  it('rolls a transaction back when a statement in it fails, and the connection stays usable', async () => {
    const failed = db.knex.transaction(async (trx) => {
      await trx('items').insert({ name: 'rolled back' });
      await trx.raw('select 1 / 0');
    });
    await expect(failed).rejects.toMatchObject({ code: '22012' });
    expect(await db.knex('items').where({ name: 'rolled back' }).first()).toBeUndefined();
    await db.knex.transaction((trx) => trx('items').insert({ name: 'committed' }));
    expect(await db.knex('items').where({ name: 'committed' }).first('name')).toEqual({ name: 'committed' });
  });

  it('refuses a parameter that cannot cross to the worker, and keeps serving', async () => {
    await expect(db.knex.raw('select ?::jsonb as f', [{ callback: () => 1 }])).rejects.toThrow(/could not be cloned/);
    expect((await db.knex.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('keeps the main thread free while a statement runs', async () => {
    let settled = false;
    const slow = db.knex.raw('select pg_sleep(3)').finally(() => (settled = true));
    // Once the statement is on its way, the event loop turns while the worker runs it.
    await new Promise<void>((sent) => db.knex.once('query', () => sent()));
    await new Promise<void>((turned) => setImmediate(turned));
    expect(settled).toBe(false);
    await slow;
  });
});
