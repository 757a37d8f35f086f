// Counts the statements a server sends to its database (knex's 'query' event, one per statement sent),
// so tests can pin how many round trips a request costs.
import type { Knex } from 'knex';

export interface QueryCounter {
  /** The statements sent while `run` ran (only `run`'s own requests should be under way). */
  during(run: () => Promise<unknown>): Promise<string[]>;
}

export function countQueries(db: Knex): QueryCounter {
  return {
    async during(run) {
      const sent: string[] = [];
      const listener = (query: { sql: string }) => sent.push(query.sql);
      db.on('query', listener);
      try {
        await run();
      } finally {
        db.off('query', listener);
      }
      return sent;
    },
  };
}
