// globalSetup of the database tests: applies the migrations once per run instead of once per server.
// On PGlite it saves a migrated data directory (PGlite's dumpDataDir) that every in-process test server
// starts from (about 0.5 s instead of an initdb of 2-5 s), and an empty one for the tests of the database
// layer itself; on PostgreSQL (TEST_DATABASE_URL) it makes a migrated template database that each test
// file's fresh database is created from.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import createKnex, { type Knex } from 'knex';
import ClientPGLite from 'knex-pglite';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrateToLatest } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A file holding a migrated PGlite data directory (tar). */
    pgliteSnapshot: string;
    /** A file holding an empty PGlite data directory (tar): a fresh database without an initdb. */
    pgliteEmptySnapshot: string;
    /** A migrated database on the TEST_DATABASE_URL server, to create test databases from. */
    postgresTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    const template = `t_template_${randomBytes(6).toString('hex')}`;
    await runAdmin(adminUrl, `CREATE DATABASE ${template}`);
    // A template must have no connections while databases are created from it: this one is closed at once.
    const knex = createKnex({ client: 'pg', connection: withDatabase(adminUrl, template), pool: { min: 0, max: 1 } });
    try {
      await migrateToLatest(knex);
    } finally {
      await knex.destroy();
    }
    project.provide('postgresTemplate', template);
    return () => runAdmin(adminUrl, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  }
  const pglite = new PGlite();
  const knex = createKnex({ client: ClientPGLite, connection: () => ({ pglite }) as Knex.StaticConnectionConfig });
  let empty: Blob;
  let migrated: Blob;
  try {
    await pglite.waitReady; // dumpDataDir does not wait for the initdb
    empty = await pglite.dumpDataDir('none');
    await migrateToLatest(knex);
    migrated = await pglite.dumpDataDir('none');
  } finally {
    await knex.destroy(); // closes PGlite too
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lia-pglite-snapshot-'));
  const save = async (name: string, tarball: Blob) => {
    const file = path.join(dir, name);
    await writeFile(file, new Uint8Array(await tarball.arrayBuffer()));
    return file;
  };
  project.provide('pgliteEmptySnapshot', await save('empty.tar', empty));
  project.provide('pgliteSnapshot', await save('migrated.tar', migrated));
  return () => rm(dir, { recursive: true, force: true });
}

export async function runAdmin(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
