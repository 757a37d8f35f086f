// Written statements (./statement.ts) on PGlite, in the worker that owns it: each is parsed and
// described once as a named statement, then every run is one Bind, Execute and Sync handed to PGlite
// together. PGlite's query() sends Parse, Describe, Bind, Describe, Execute and Sync one at a time
// for every statement, and PostgreSQL parses and plans it again each time: for a row read by its key
// that is most of what the worker does.
import { parse, protocol, type PGlite } from '@electric-sql/pglite';
import type { PgliteResults } from './pgliteProtocol.js';
import { isStalePlan } from './errors.js';

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];
type RowDescription = Extract<BackendMessage, { name: 'rowDescription' }>;

interface Described {
  /** The type of each parameter, chosen by PostgreSQL when it parsed the statement. */
  parameterTypes: number[];
  /** What PostgreSQL described the result as (none for a statement that returns no rows). */
  rowDescription: RowDescription | undefined;
}

const { serialize } = protocol;

/** invalid_sql_statement_name: no prepared statement of that name (any more). */
const isUnknownStatement = (error: unknown) => (error as { code?: unknown }).code === '26000';

const joined = (parts: Uint8Array[]): Uint8Array => {
  const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
};

export class NamedStatements {
  private readonly described = new Map<string, Described>();

  constructor(private readonly pglite: PGlite) {}

  /** Runs the statement `name` (SQL `sql`) with `params`, as query() would answer it. */
  run(name: string, sql: string, params: unknown[]): Promise<PgliteResults> {
    // Exclusive as query() is: nothing else PGlite runs can come between the messages of one run.
    return this.pglite.runExclusive(async () => {
      let results: PgliteResults;
      try {
        results = await this.execute(name, sql, params);
      } catch (error) {
        if (!isStalePlan(error) && !isUnknownStatement(error)) throw error;
        // A migration changed the columns the statement reads, or the session was reset (DISCARD ALL):
        // parse it again, as it is now.
        await this.forget(name);
        results = await this.execute(name, sql, params);
      }
      // As query() does after a statement outside a transaction (written statements run outside one).
      await this.pglite.syncToFs();
      return results;
    });
  }

  private async execute(name: string, sql: string, params: unknown[]): Promise<PgliteResults> {
    const { parameterTypes, rowDescription } = await this.describe(name, sql);
    const values = params.map((param, i) => {
      if (param === null || param === undefined) return null;
      const serializer = this.pglite.serializers[parameterTypes[i]];
      return serializer ? serializer(param) : String(param);
    });
    const messages = await this.exchange(serialize.bind({ statement: name, values }), serialize.execute({}), serialize.sync());
    const [results] = parse.parseResults(rowDescription ? [rowDescription, ...messages] : messages, this.pglite.parsers);
    const { rows, fields, affectedRows } = results;
    return { rows, fields, affectedRows };
  }

  private async describe(name: string, sql: string): Promise<Described> {
    const known = this.described.get(name);
    if (known) return known;
    const messages = await this.exchange(serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync());
    const described: Described = {
      parameterTypes: parse.parseDescribeStatementResults(messages),
      rowDescription: messages.find((message): message is RowDescription => message.name === 'rowDescription'),
    };
    this.described.set(name, described);
    return described;
  }

  private async forget(name: string): Promise<void> {
    this.described.delete(name);
    await this.exchange(serialize.close({ type: 'S', name }), serialize.sync());
  }

  /** Hands PGlite the messages at once; its answers come back parsed (a DatabaseError is thrown). */
  private exchange(...messages: Uint8Array[]): Promise<BackendMessage[]> {
    return this.pglite.execProtocolStream(joined(messages), { syncToFs: false });
  }
}
