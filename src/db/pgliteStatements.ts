// Statements in the worker that owns PGlite, kept parsed: each SQL text is parsed and described once as
// a named statement of PGlite's session, then every run is one Bind, Execute and Sync handed to PGlite
// together. PGlite's query() sends Parse, Describe, Bind, Describe, Execute and Sync one at a time for
// every statement, and PostgreSQL parses and plans it again each time: for a row read by its key that
// was most of what the worker did. knex writes the same few hundred texts again and again; the least
// recently used beyond STATEMENTS_KEPT are closed, so one-off texts (migrations) do not pile up.
// PGlite's answers are read by node-postgres's protocol parser (pg-protocol), which reads values out of
// one Buffer; PGlite's own parser copies every value of every row into an ArrayBuffer of its own first.
import { protocol, type PGlite } from '@electric-sql/pglite';
import type { BackendMessage, CommandCompleteMessage, DataRowMessage, ParameterDescriptionMessage, RowDescriptionMessage } from 'pg-protocol/dist/messages.js';
import { Parser } from 'pg-protocol/dist/parser.js';
import type { PgliteResults } from './pgliteProtocol.js';
import { isStalePlan, isUnknownStatement } from './errors.js';

interface Parsed {
  name: string;
  /** The type of each parameter, chosen by PostgreSQL when it parsed the statement. */
  parameterTypes: number[];
  /** The result's columns (none for a statement that returns no rows). */
  fields: Array<{ name: string; dataTypeID: number }>;
}

/** The command tags that end in a count of rows written (as PGlite's query() counts affectedRows). */
const WRITING_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'COPY', 'MERGE']);

export const STATEMENTS_KEPT = 256;

const { serialize } = protocol;

function joined(parts: Uint8Array[]): Uint8Array {
  const bytes = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return bytes;
}

export class PgliteStatements {
  /** By SQL text, least recently used first (a Map keeps insertion order). */
  private readonly parsed = new Map<string, Parsed>();
  private nextName = 1;

  constructor(
    private readonly pglite: PGlite,
    private readonly kept = STATEMENTS_KEPT,
  ) {}

  /** Runs `sql` with `params` and answers as PGlite's query() does. */
  query(sql: string, params: readonly unknown[] = []): Promise<PgliteResults> {
    // Exclusive as query() is: nothing else PGlite runs can come between the messages of one run.
    return this.pglite.runExclusive(async () => {
      let results: PgliteResults;
      try {
        results = await this.execute(sql, params);
      } catch (error) {
        if (!isStalePlan(error) && !isUnknownStatement(error)) throw error;
        // A migration changed the columns the statement reads, or the session was reset by a statement
        // sent past this class: parse it again, as it is now. In a transaction the error has aborted it
        // and the second try cannot run either: the first error is the one to answer with.
        await this.forget(sql);
        results = await this.execute(sql, params).catch(() => Promise.reject(error));
      }
      // DISCARD ALL and DEALLOCATE ALL (a database reset for its next user) dropped every statement.
      if (results.command === 'DISCARD' || results.command === 'DEALLOCATE') this.parsed.clear();
      // As query() does; a no-op on a data directory on disk, where every write goes straight to a file.
      await this.pglite.syncToFs();
      return results;
    });
  }

  private async execute(sql: string, params: readonly unknown[]): Promise<PgliteResults> {
    const { name, parameterTypes, fields } = await this.parse(sql);
    const values = params.map((param, i) => {
      if (param === null || param === undefined) return null;
      const serializer = this.pglite.serializers[parameterTypes[i]];
      return serializer ? serializer(param) : String(param);
    });
    const messages = await this.exchange(serialize.bind({ statement: name, values }), serialize.execute({}), serialize.sync());
    // Rows built here rather than by PGlite's parseResults (the messages have its shapes): that one
    // builds each row through an array of entries, which cost a 20-message list a tenth of its throughput.
    const parsers = fields.map(({ dataTypeID }) => this.pglite.parsers[dataTypeID]);
    const rows: unknown[] = [];
    let tag = '';
    for (const message of messages) {
      if (message.name === 'dataRow') {
        const row: Record<string, unknown> = {};
        (message as DataRowMessage).fields.forEach((value, i) => {
          const parser = parsers[i];
          row[fields[i].name] = value === null || !parser ? value : parser(value, fields[i].dataTypeID);
        });
        rows.push(row);
      } else if (message.name === 'commandComplete') tag = (message as CommandCompleteMessage).text;
    }
    // As PGlite's query() reads the tag: "SELECT 2", "UPDATE 3", "INSERT 0 5", "CREATE TABLE".
    const words = tag.split(' ');
    const command = words[0];
    const rowCount = Number.parseInt(words[words.length - 1], 10);
    return {
      rows,
      fields,
      affectedRows: WRITING_COMMANDS.has(command) ? rowCount : 0,
      command,
      ...(Number.isNaN(rowCount) ? {} : { rowCount }),
    };
  }

  private async parse(sql: string): Promise<Parsed> {
    const known = this.parsed.get(sql);
    if (known) {
      // Most recently used now: to the end of the order.
      this.parsed.delete(sql);
      this.parsed.set(sql, known);
      return known;
    }
    const name = `pglite_${this.nextName++}`;
    const messages = await this.exchange(serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync());
    const parameters = messages.find((message): message is ParameterDescriptionMessage => message.name === 'parameterDescription');
    const rowDescription = messages.find((message): message is RowDescriptionMessage => message.name === 'rowDescription');
    const parsed: Parsed = {
      name,
      parameterTypes: parameters?.dataTypeIDs ?? [],
      fields: rowDescription?.fields.map(({ name: column, dataTypeID }) => ({ name: column, dataTypeID })) ?? [],
    };
    this.parsed.set(sql, parsed);
    if (this.parsed.size > this.kept) await this.forget(this.parsed.keys().next().value!);
    return parsed;
  }

  private async forget(sql: string): Promise<void> {
    const parsed = this.parsed.get(sql);
    if (!parsed) return;
    this.parsed.delete(sql);
    // Closing a statement that is gone already is no error; in a failed transaction the error is ignored.
    await this.exchange(serialize.close({ type: 'S', name: parsed.name }), serialize.sync()).catch(() => undefined);
  }

  /** Hands PGlite the messages at once and reads its answer; the first database error is thrown. */
  private async exchange(...messages: Uint8Array[]): Promise<BackendMessage[]> {
    const chunks: Buffer[] = [];
    // The bytes handed out are a view of PGlite's memory, which the next statement overwrites: copied.
    await this.pglite.execProtocolRawStream(joined(messages), { syncToFs: false, onRawData: (bytes) => void chunks.push(Buffer.from(bytes)) });
    const answers: BackendMessage[] = [];
    new Parser().parse(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), (message) => void answers.push(message));
    const error = answers.find((message) => message.name === 'error');
    if (error) throw error;
    return answers;
  }
}
