// The hottest reads, written as SQL once instead of built by knex's query builder on every request.
// Outside a transaction they go straight to a connection, without knex's builder and runner, which cost
// a light request about a sixth of its CPU (GET /v1/account: the builder compiling the same SQL again,
// the runner's connection and response bookkeeping): on PostgreSQL as named prepared statements sent by
// the statements' worker thread (./pgStatementsThread.ts), on PGlite to its shared connection. In a
// transaction they run through knex as raw SQL.
import type { Knex } from 'knex';
import { prepared, statementName } from './prepared.js';

export interface NamedStatement {
  name: string;
  /** The SQL with $1, $2, ... placeholders. */
  text: string;
}

/** A database client that can run a written statement itself (both clients of ./database.ts). */
export interface NamedStatementRunner {
  namedRows(statement: NamedStatement, values: readonly unknown[]): Promise<unknown[]>;
}

export interface Statement<Row> {
  rows(db: Knex, values: readonly unknown[]): Promise<Row[]>;
}

/** `sql` takes its values as `?` placeholders, in order. */
export function statement<Row>(sql: string): Statement<Row> {
  let position = 0;
  const text = sql.replace(/\?/g, () => `$${++position}`);
  const named: NamedStatement = { name: statementName(text), text };
  return {
    async rows(db, values) {
      const runner = db.client as Partial<NamedStatementRunner>;
      if (!db.isTransaction && runner.namedRows) return (await runner.namedRows(named, values)) as Row[];
      return (await prepared(db.raw<{ rows: Row[] }>(sql, values as Knex.RawBinding[]))).rows;
    },
  };
}
