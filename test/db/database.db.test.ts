import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { PgStatementsThread } from '../../src/db/pgStatementsThread.js';
import { statement } from '../../src/db/statement.js';
import { backendName, createTestDatabase, type TestDatabase } from '../support/databases.js';

const CREATE_THINGS = `
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('things', (table) => {
    table.bigIncrements('id');
    table.decimal('amount', 12, 2);
    table.timestamp('happened_at', { useTz: true });
    table.timestamp('local_at', { useTz: false });
    table.date('day');
    table.jsonb('payload');
    table.boolean('active');
    table.specificType('counts', 'bigint[]');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('things');
}
`;

// Plain JavaScript, to check that .js migrations load too.
const ADD_NOTE = `
export async function up(knex) {
  await knex.schema.alterTable('things', (table) => table.text('note'));
}

export async function down(knex) {
  await knex.schema.alterTable('things', (table) => table.dropColumn('note'));
}
`;

let testDatabase: TestDatabase;
let db: Database;
let migrationsDir: string;

beforeAll(async () => {
  migrationsDir = await mkdtemp(join(tmpdir(), 'migrations-'));
  await writeFile(join(migrationsDir, '001_create_things.ts'), CREATE_THINGS);
  await writeFile(join(migrationsDir, '002_add_note.js'), ADD_NOTE);
  await writeFile(join(migrationsDir, 'README.md'), 'not a migration');
  testDatabase = await createTestDatabase();
  db = await openDatabase({ ...testDatabase, dataDir: join(migrationsDir, 'unused-data-dir') });
});

afterAll(async () => {
  await db?.close();
  await testDatabase?.drop();
  await rm(migrationsDir, { recursive: true, force: true });
});

describe(`database on ${backendName}`, () => {
  it('opens the backend the tests were asked for', async () => {
    expect(db.kind).toBe(backendName);
  });

  it('applies migrations in name order, once', async () => {
    expect(await migrateToLatest(db.knex, migrationsDir)).toEqual(['001_create_things.ts', '002_add_note.js']);
    expect(await migrateToLatest(db.knex, migrationsDir)).toEqual([]);
    expect(await db.knex('knex_migrations').pluck('name')).toEqual(['001_create_things.ts', '002_add_note.js']);
  });

  it('runs statements that arrive during a transaction outside it, after it, and many at once otherwise', async () => {
    await db.knex.schema.createTable('gated', (table) => table.integer('n'));
    try {
      let outside: Promise<unknown> | undefined;
      const rolledBack = db.knex.transaction(async (trx) => {
        await trx('gated').insert({ n: 1 });
        outside = db.knex('gated').insert({ n: 2 }); // another request's statement, meanwhile
        await trx('gated').insert({ n: 3 });
        expect((await trx('gated').orderBy('n').pluck('n')).map(Number)).toEqual([1, 3]);
        throw new Error('roll back');
      });
      await expect(rolledBack).rejects.toThrow('roll back');
      await outside;
      expect((await db.knex('gated').pluck('n')).map(Number)).toEqual([2]);
      // Statements outside transactions, many in flight together, each answered with its own rows.
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => db.knex.raw('select ?::int as n', [i])));
      expect(answers.map((answer) => answer.rows[0].n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    } finally {
      await db.knex.schema.dropTable('gated');
    }
  });

  it.skipIf(backendName !== 'pglite')('closes only once the transaction running has ended', async () => {
    const own = await openDatabase({ ...(await createTestDatabase()), dataDir: join(migrationsDir, 'unused-too') });
    const order: string[] = [];
    let entered!: () => void;
    let finish!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    const transaction = own.knex.transaction(async (trx) => {
      await trx.raw('select 1');
      entered();
      await finishing;
      expect((await trx.raw('select 2 as n')).rows).toEqual([{ n: 2 }]);
      order.push('transaction ended');
    });
    await inside;
    const closed = own.close().then(() => order.push('closed'));
    await new Promise((resolve) => setImmediate(resolve)); // the close has started, and waits
    expect(order).toEqual([]);
    finish();
    await Promise.all([transaction, closed]);
    expect(order).toEqual(['transaction ended', 'closed']);
  });

  it('answers a delete and an update with the number of rows they touched', async () => {
    await db.knex.schema.createTable('counted', (table) => table.integer('n'));
    try {
      await db.knex('counted').insert([{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(await db.knex('counted').where('n', '>', 1).update({ n: 0 })).toBe(2);
      expect(await db.knex('counted').where({ n: 0 }).del()).toBe(2);
      expect(await db.knex('counted').where({ n: 9 }).del()).toBe(0);
    } finally {
      await db.knex.schema.dropTable('counted');
    }
  });

  // Only pg has global parsers to leave alone; PGlite instances have their own.
  if (backendName === 'postgres') {
    it('leaves the global pg type parsers to other pg users', async () => {
      const client = new pg.Client({ connectionString: testDatabase.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query('select 5::int8 as int8, 1.5::numeric as numeric');
        expect(rows).toEqual([{ int8: '5', numeric: '1.5' }]);
      } finally {
        await client.end();
      }
    });
  }

  describe('type parsing', () => {
    const happenedAt = new Date('2024-02-29T23:30:00.123Z');
    const row = {
      amount: '1234.50',
      happened_at: happenedAt,
      payload: JSON.stringify({ nested: { list: [1, 'two'] } }),
      active: true,
      counts: [1, 9007199254740991],
    };
    const expected = {
      id: expect.any(Number),
      amount: 1234.5,
      happened_at: happenedAt,
      local_at: null,
      day: null,
      payload: { nested: { list: [1, 'two'] } },
      active: true,
      counts: [1, 9007199254740991],
      note: null,
    };

    it('returning(*) and first() give JS numbers, Dates, objects and booleans', async () => {
      const [inserted] = await db.knex('things').insert(row).returning('*');
      expect(inserted).toEqual(expected);
      expect(await db.knex('things').where({ id: inserted.id }).first()).toEqual(expected);
    });

    it('raw queries parse the same way', async () => {
      const { rows } = await db.knex.raw(`
        select 42::int8 as int8, 0.25::numeric as numeric, true as bool, false as no,
               '2024-01-02T03:04:05Z'::timestamptz as tz, '{"a":[1]}'::jsonb as jsonb,
               '{"b":2}'::json as json, array[1.5, 2]::numeric[] as numerics, '2024-01-02'::date as day
      `);
      expect(rows).toEqual([
        {
          int8: 42,
          numeric: 0.25,
          bool: true,
          no: false,
          tz: new Date('2024-01-02T03:04:05Z'),
          jsonb: { a: [1] },
          json: { b: 2 },
          numerics: [1.5, 2],
          day: '2024-01-02',
        },
      ]);
    });

    it('counts are numbers', async () => {
      const counted = await db.knex('things').count({ n: '*' }).first();
      expect(counted).toEqual({ n: expect.any(Number) });
      expect(counted?.n).toBeGreaterThan(0);
    });

    it('refuses an int8 beyond Number.MAX_SAFE_INTEGER, and the connection stays usable', async () => {
      await expect(db.knex.raw('select 9007199254740992::int8 as too_big')).rejects.toThrow(/MAX_SAFE_INTEGER/);
      const { rows } = await db.knex.raw('select 1::int8 as one');
      expect(rows).toEqual([{ one: 1 }]);
    });

    // On PostgreSQL written statements are sent by a worker thread (src/db/pgStatementsThread.ts), which
    // has its own copy of TZ: a wall clock must still be read and written in this thread's time zone.
    it('written statements read and send values as knex does, in this thread\'s time zone', async () => {
      const lateEvening = new Date('2024-03-01T02:30:00.000Z'); // 21:30 on Feb 29 in New York
      const written = statement<Record<string, unknown>>(`
          select 42::int8 as int8, 0.25::numeric as numeric, true as bool, '{"a":[1]}'::jsonb as jsonb,
                 '2024-01-02T03:04:05Z'::timestamptz as tz, '2024-02-29 21:30:00'::timestamp as local,
                 array['2024-02-29 21:30:00'::timestamp] as locals, ?::timestamp as sent, ?::date as day,
                 array[1, 9007199254740991]::int8[] as counts`);
      // Once before the time zone changes: a thread that has read local times keeps the zone it read them in.
      await written.rows(db.knex, [lateEvening, lateEvening]);
      const previousTz = process.env.TZ;
      process.env.TZ = 'America/New_York';
      try {
        const expectedRow = {
          int8: 42,
          numeric: 0.25,
          bool: true,
          jsonb: { a: [1] },
          tz: new Date('2024-01-02T03:04:05Z'),
          local: lateEvening,
          locals: [lateEvening],
          sent: lateEvening,
          day: '2024-02-29',
          counts: [1, 9007199254740991],
        };
        expect(await written.rows(db.knex, [lateEvening, lateEvening])).toEqual([expectedRow]);
        await db.knex.transaction(async (trx) => expect(await written.rows(trx, [lateEvening, lateEvening])).toEqual([expectedRow]));
      } finally {
        if (previousTz === undefined) delete process.env.TZ;
        else process.env.TZ = previousTz;
      }
    });

    it('a written statement that PostgreSQL refuses fails with its code, and the next one runs', async () => {
      const divide = statement<{ q: number }>('select 1 / ?::int as q');
      await expect(divide.rows(db.knex, [0])).rejects.toMatchObject({ code: '22012' });
      expect(await divide.rows(db.knex, [1])).toEqual([{ q: 1 }]);
    });

    it('a Date written to timestamp and date columns reads back the same in any time zone', async () => {
      const previousTz = process.env.TZ;
      process.env.TZ = 'America/New_York';
      try {
        const lateEvening = new Date('2024-03-01T02:30:00.000Z'); // still Feb 29 in New York
        const [inserted] = await db.knex('things').insert({ local_at: lateEvening, day: lateEvening }).returning('*');
        expect(inserted.local_at).toEqual(lateEvening);
        expect(inserted.day).toBe('2024-02-29');
      } finally {
        if (previousTz === undefined) delete process.env.TZ;
        else process.env.TZ = previousTz;
      }
    });
  });
});

describe.skipIf(backendName !== 'postgres')("the worker thread of PostgreSQL's written statements", () => {
  it('when it is lost, what waited fails as unavailable (503) and later statements run on the main thread', async () => {
    const own = await openDatabase({ ...testDatabase, dataDir: '/nonexistent' });
    const thread = (own.knex.client.config as { statementsThread: PgStatementsThread }).statementsThread;
    const sleepy = statement<{ slept: string }>('select pg_sleep(?)::text as slept');
    try {
      expect(thread.running).toBe(true);
      const waiting = sleepy.rows(own.knex, [5]);
      // A crash of the thread (an exhausted heap, a bug in a driver) ends it as terminate() does.
      await (thread as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
      await expect(waiting).rejects.toMatchObject({ code: '08006' });
      expect(thread.running).toBe(false);
      expect(await sleepy.rows(own.knex, [0])).toEqual([{ slept: '' }]);
    } finally {
      await own.close();
    }
  });
});
