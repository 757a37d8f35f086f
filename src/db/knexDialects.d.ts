// knex ships typings for its instance and base client only; its PostgreSQL dialect is subclassed in ./database.ts.
declare module 'knex/lib/dialects/postgres/index.js' {
  import type { Knex } from 'knex';
  const PostgresDialect: typeof Knex.Client;
  export default PostgresDialect;
}

// The transaction class of that dialect, subclassed for the embedded database's connection gate.
declare module 'knex/lib/dialects/postgres/execution/pg-transaction.js' {
  import type { Knex } from 'knex';
  class PgTransaction {
    constructor(client: Knex.Client, container: unknown, config: unknown, outerTx: unknown);
    readonly client: Knex.Client;
    /** The transaction this one is a savepoint of, if any. */
    readonly outerTx: unknown;
    /** Gets the connection (`config.connection`, else the client's), runs `cb` with it and gives it back. */
    acquireConnection(config: Record<string, unknown> | undefined, cb: (connection: unknown) => Promise<unknown>): Promise<unknown>;
  }
  export default PgTransaction;
}
