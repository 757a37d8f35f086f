// The last safety net: what the database itself refuses (on PGlite and on PostgreSQL, whose errors the
// mapping reads) becomes a 4xx, and an unavailable database a 503 with Retry-After.
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { fromDatabaseError, sqlStateOf } from '../../src/db/errors.js';
import type { ApiError } from '../../src/errors.js';
import { backendName, createTestDatabase, type TestDatabase } from '../support/databases.js';

let testDatabase: TestDatabase;
let db: Database;

beforeAll(async () => {
  testDatabase = await createTestDatabase();
  db = await openDatabase({ ...testDatabase, dataDir: join(tmpdir(), 'unused-data-dir') });
  await db.knex.schema.createTable('things', (table) => {
    table.text('name').unique();
    table.jsonb('payload');
    table.bigInteger('amount');
  });
});

afterAll(async () => {
  await db?.close();
  await testDatabase?.drop();
});

/** The answer for what the database says to `run`. */
async function answerFor(run: () => Promise<unknown>): Promise<ApiError | undefined> {
  const failure = await run().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(failure).toBeDefined();
  return fromDatabaseError(failure);
}

const unstorable = (type: string) => ({ status: 422, detail: [expect.objectContaining({ loc: [], type })] });

describe(`database errors as answers (${backendName})`, () => {
  it('refuses a NUL character in text and in jsonb with 422', async () => {
    expect(await answerFor(() => db.knex('things').insert({ name: 'a\u0000b' }))).toMatchObject(unstorable('unstorable_character'));
    expect(await answerFor(() => db.knex.raw(`select ?::jsonb`, ['{"a":"\\u0000"}']))).toMatchObject(unstorable('unstorable_character'));
  });

  it('refuses numbers beyond bigint with 422', async () => {
    expect(await answerFor(() => db.knex('things').insert({ amount: '99999999999999999999' }))).toMatchObject(unstorable('out_of_range'));
    expect(await answerFor(() => db.knex('things').insert({ amount: 1e300 }))).toMatchObject(unstorable('invalid_value'));
  });

  it('refuses an invalid date with 422 and a duplicate with 409', async () => {
    expect(await answerFor(() => db.knex.raw(`select '2020-13-45'::date`))).toMatchObject(unstorable('invalid_value'));
    await db.knex('things').insert({ name: 'once' });
    expect(await answerFor(() => db.knex('things').insert({ name: 'once' }))).toMatchObject({ status: 409 });
  });

  it('leaves errors that are not about values or availability to the caller', async () => {
    const failure = await db.knex.raw('select * from no_such_table').catch((err: unknown) => err);
    expect(sqlStateOf(failure)).toBe('42P01');
    expect(fromDatabaseError(failure)).toBeUndefined();
    expect(fromDatabaseError(new Error('something else'))).toBeUndefined();
    expect(fromDatabaseError('not even an error')).toBeUndefined();
  });
});

describe('an unavailable database', () => {
  const unavailable = { status: 503, headers: { 'Retry-After': '5' } };

  it('is a 503 with Retry-After, whatever the driver says', () => {
    const failures = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' }),
      new Error('Connection terminated unexpectedly'),
      new Error('Query read timeout'),
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('the database system is starting up'), { code: '57P03' }),
      Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      Object.assign(new Error('cached plan must not change result type'), { code: '0A000' }),
    ];
    for (const failure of failures) expect(fromDatabaseError(failure), failure.message).toMatchObject(unavailable);
  });
});
