// knex ships typings for its instance and base client only; its PostgreSQL dialect is subclassed in ./database.ts.
declare module 'knex/lib/dialects/postgres/index.js' {
  import type { Knex } from 'knex';
  const PostgresDialect: typeof Knex.Client;
  export default PostgresDialect;
}
