// Statements kept parsed in PGlite's worker (src/db/pgliteStatements.ts), on a PGlite of the test's
// own: each SQL text parsed once as a named statement and then only bound and executed; answers as
// PGlite's query() gives them; parsed again when a migration or a reset made the statement unusable.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgliteStatements } from '../../src/db/pgliteStatements.js';
import { backendName, createTestDatabase } from '../support/databases.js';

describe.skipIf(backendName !== 'pglite')('statements kept parsed on PGlite', () => {
  let pglite: PGlite;
  let statements: PgliteStatements;
  const prepared = async () =>
    (await pglite.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements ORDER BY name')).rows.map(
      (row) => row.statement,
    );

  beforeAll(async () => {
    // From the run's empty snapshot: an initdb of its own cost this file most of its CPU time.
    const { memory } = await createTestDatabase();
    if (typeof memory !== 'object' || !('snapshot' in memory)) throw new Error('expected an empty PGlite snapshot');
    pglite = await PGlite.create({ loadDataDir: memory.snapshot });
    statements = new PgliteStatements(pglite, 3);
    await pglite.exec(`CREATE TABLE probe (id int PRIMARY KEY, note text, doc jsonb, at timestamptz, data bytea)`);
  });
  afterAll(() => pglite?.close());

  it('answers as query() does: typed parameters, parsed values, fields, affected rows and the command', async () => {
    const insert = `INSERT INTO probe (id, note, doc, at, data) VALUES ($1, $2, $3, $4, $5) RETURNING *`;
    const values = [1, null, { a: [1, 'x'] }, new Date('2026-11-26T10:00:00.000Z'), new Uint8Array([0, 255])];
    const ours = await statements.query(insert, values);
    await pglite.query('DELETE FROM probe');
    const theirs = await pglite.query(insert, values);
    expect(ours).toEqual({ ...theirs, command: 'INSERT', rowCount: 1 });
    expect(ours.rows).toEqual([{ id: 1, note: null, doc: { a: [1, 'x'] }, at: new Date('2026-11-26T10:00:00.000Z'), data: new Uint8Array([0, 255]) }]);
    expect(ours.affectedRows).toBe(1);
    const update = await statements.query('UPDATE probe SET note = $1 WHERE id > $2', ['n', 0]);
    expect(update).toMatchObject({ rows: [], fields: [], affectedRows: 1, command: 'UPDATE' });
  });

  it('parses a text once and then reuses it; keeps only the most recently used texts', async () => {
    await pglite.query('DEALLOCATE ALL');
    const read = (sql: string) => statements.query(sql, [1]);
    await read('SELECT id FROM probe WHERE id = $1');
    await read('SELECT note FROM probe WHERE id = $1');
    await read('SELECT id FROM probe WHERE id = $1');
    expect(await prepared()).toEqual(['SELECT id FROM probe WHERE id = $1', 'SELECT note FROM probe WHERE id = $1']);
    await read('SELECT doc FROM probe WHERE id = $1');
    await read('SELECT at FROM probe WHERE id = $1'); // the fourth text: the least recently used one is closed
    expect((await prepared()).sort()).toEqual(['SELECT at FROM probe WHERE id = $1', 'SELECT doc FROM probe WHERE id = $1', 'SELECT id FROM probe WHERE id = $1']);
    expect((await read('SELECT note FROM probe WHERE id = $1')).rows).toEqual([{ note: 'n' }]);
  });

  it('passes a database error on, and runs the next statement as usual', async () => {
    await expect(statements.query('SELEC 1')).rejects.toMatchObject({ code: '42601' });
    await expect(statements.query('INSERT INTO probe (id) VALUES ($1)', [1])).rejects.toMatchObject({ code: '23505' });
    expect((await statements.query('SELECT count(*)::int AS n FROM probe')).rows).toEqual([{ n: 1 }]);
  });

  it('parses a statement again after a migration changed its columns, and after DISCARD ALL', async () => {
    const all = 'SELECT * FROM probe WHERE id = $1';
    expect(Object.keys((await statements.query(all, [1])).rows[0] as object)).toEqual(['id', 'note', 'doc', 'at', 'data']);
    await pglite.exec('ALTER TABLE probe ADD COLUMN more text');
    expect((await statements.query(all, [1])).rows[0]).toMatchObject({ id: 1, more: null });
    await pglite.exec('DISCARD ALL');
    expect((await statements.query(all, [1])).rows[0]).toMatchObject({ id: 1, more: null });
  });

  it('knows its statements are gone after a DISCARD ALL it ran: the next transaction is not refused', async () => {
    const count = 'SELECT count(*)::int AS n FROM probe WHERE id > $1';
    await statements.query(count, [0]);
    await statements.query('DISCARD ALL');
    await statements.query('BEGIN');
    expect((await statements.query(count, [0])).rows).toEqual([{ n: 1 }]);
    await statements.query('COMMIT');
  });

  it('in a transaction, answers a stale statement with its own error (the transaction is aborted)', async () => {
    const all = 'SELECT * FROM probe WHERE id = $1';
    await statements.query(all, [1]);
    await pglite.exec('ALTER TABLE probe ADD COLUMN last text');
    await statements.query('BEGIN');
    await expect(statements.query(all, [1])).rejects.toMatchObject({ code: '0A000' });
    await statements.query('ROLLBACK');
    expect((await statements.query(all, [1])).rows[0]).toMatchObject({ id: 1, last: null });
  });
});
