// The events history of the console: the stored log of an organization's mode, newest first, filtered
// by type, by the object it is about (a call or a session) and by time. The live view streams; this reads.
import type { Knex } from 'knex';
import type { Mode } from '../auth/principal.js';
import type { EventPayload } from './types.js';

export interface EventFilter {
  type?: string;
  /** A call or session id: the events about it. */
  objectId?: string;
  since?: Date;
  until?: Date;
  limit: number;
}

export async function eventHistory(db: Knex, payer: { orgId: string; mode: Mode }, filter: EventFilter): Promise<EventPayload[]> {
  const query = db('events').where({ org_id: payer.orgId, mode: payer.mode }).orderBy('seq', 'desc').limit(filter.limit);
  if (filter.type) query.andWhere({ type: filter.type });
  if (filter.objectId) {
    const id = filter.objectId;
    query.andWhere((q) => q.where({ call_id: id }).orWhere({ session_id: id }));
  }
  if (filter.since) query.andWhere('created_at', '>=', filter.since);
  if (filter.until) query.andWhere('created_at', '<', filter.until);
  const rows: Array<{ payload: EventPayload | string }> = await query.select('payload');
  return rows.map((row) => (typeof row.payload === 'string' ? (JSON.parse(row.payload) as EventPayload) : row.payload));
}
