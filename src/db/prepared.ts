// Statements that hot requests send every time, sent to PostgreSQL as named prepared statements: each
// connection has one parsed once, and PostgreSQL may keep a generic plan, instead of parsing and
// planning it again for every request (a message post's statement took 0.9 ms of PostgreSQL's CPU to
// parse and plan against about 0.4 ms to run). Only statements whose SQL takes a bounded number of
// shapes are marked: each distinct text stays prepared on every connection for the connection's life.
// On PGlite the mark changes nothing: its worker keeps every statement parsed (./pgliteStatements.ts).
import { hash } from 'node:crypto';
import type { Knex } from 'knex';
import type pg from 'pg';

const PREPARE = 'prepare';

/** Marks `query` to be sent as a prepared statement (PostgreSQL). */
export const prepared = <Query extends Knex.QueryBuilder | Knex.Raw>(query: Query): Query =>
  query.options({ [PREPARE]: true }) as Query;

/**
 * The driver options of a compiled statement: with `named` (node-postgres), a statement marked
 * `prepared` is named after its SQL text (one name per text, as node-postgres requires); the mark
 * itself never reaches a driver.
 */
export function driverOptions(sql: string, options: Record<string, unknown> | undefined, named: boolean): Record<string, unknown> | undefined {
  if (!options || !(PREPARE in options)) return options;
  const { [PREPARE]: marked, ...rest } = options;
  return marked && named ? { ...rest, name: statementName(sql) } : rest;
}

/** The name of a prepared statement: one per SQL text, as node-postgres requires. */
export const statementName = (sql: string) => `s_${hash('sha1', sql, 'base64url')}`;

/**
 * Drops a connection's prepared statement, to be prepared again at its next use: node-postgres prepares
 * a name once per connection and remembers it.
 */
export async function forgetPreparedStatement(connection: pg.ClientBase, name: string): Promise<void> {
  await connection.query(`DEALLOCATE "${name}"`);
  delete (connection as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements[name];
}
