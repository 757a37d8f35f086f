// Objects that belong to an organization in one mode (calls, sessions): what a payer may see of them.
import type { Knex } from 'knex';
import { readShared } from '../db/sharedReads.js';
import type { Payer } from './principal.js';
import { errors } from '../errors.js';
import { statement, type Statement } from '../db/statement.js';

/** The object if it is the payer's (organization and mode); anything else does not exist for it (404). */
export async function findOwned<Row extends object>(
  db: Knex,
  table: string,
  payer: Payer,
  id: string,
  what: string,
  lock = false,
): Promise<Row> {
  const values = [id, payer.orgId, payer.mode];
  const read = async () => (await ownedRow(table, lock).rows(db, values))[0];
  const row = lock ? await read() : await readShared(db, `${table}\0${values.join('\0')}`, read);
  if (!row) throw errors.notFound(what);
  return row as Row;
}

/** One statement per table and lock (the tables are the few that name owned objects). */
const ownedRows = new Map<string, Statement<object>>();
function ownedRow(table: string, lock: boolean): Statement<object> {
  const key = `${table} ${lock}`;
  let found = ownedRows.get(key);
  if (!found) {
    found = statement(`SELECT * FROM "${table}" WHERE id = ? AND org_id = ? AND mode = ? LIMIT 1${lock ? ' FOR UPDATE' : ''}`);
    ownedRows.set(key, found);
  }
  return found;
}

export interface OwnedFilter {
  status?: string;
  external_id?: string;
  limit?: number;
}

/** The payer's objects, newest first, filtered by status and external_id. */
export async function listOwned<Row extends object>(db: Knex, table: string, payer: Payer, filter: OwnedFilter): Promise<Row[]> {
  const query = db<Row>(table).where({ org_id: payer.orgId, mode: payer.mode } as never);
  if (filter.status) query.andWhere({ status: filter.status } as never);
  if (filter.external_id !== undefined) query.andWhere({ external_id: filter.external_id } as never);
  const rows = await query
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(filter.limit ?? 50);
  return rows as Row[];
}
