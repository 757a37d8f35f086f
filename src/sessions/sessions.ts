// Support chat sessions: their rows, what clients see of them, and the state table of the document.
import type { Knex } from 'knex';
import type { Mode, Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import { withEvents } from '../events/log.js';
import { newEvent, type EventData, type EventType, type Metadata, type NewEvent } from '../events/types.js';
import { hashSecret, newId, newSecret } from '../lib/ids.js';
import { findOwned, listOwned } from '../auth/owned.js';
import type { Config } from '../config.js';
import type { EventBus } from '../events/bus.js';

export interface SessionRow {
  id: string;
  org_id: string;
  mode: Mode;
  status: 'open' | 'closed';
  agent_language: string;
  agent_name: string;
  customer_language: string | null;
  customer_name: string | null;
  customer_last_seen_at: Date | null;
  customer_key_hash: string;
  external_id: string | null;
  metadata: Metadata;
  retention_days: number | null;
  created_at: Date;
  closed_at: Date | null;
}

export interface SessionOut {
  id: string;
  status: 'open' | 'closed';
  agent_language: string;
  agent_name: string;
  customer_language: string | null;
  customer_name: string | null;
  customer_last_seen_at: string | null;
  customer_url: string | null;
  external_id: string | null;
  metadata: Metadata;
  retention_days: number | null;
  livemode: boolean;
  created_at: string;
  closed_at: string | null;
}

export type SessionDeps = { db: Knex; events: EventBus; actingApp: string | null; config: Config };

export const DEFAULT_AGENT_NAME = 'Agent';
export const DEFAULT_CUSTOMER_NAME = 'Customer';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** The link that opens the chat for the customer; only made (and shown) when its key is made. */
export const customerUrl = (publicBaseUrl: string, sessionId: string, key: string) =>
  `${publicBaseUrl}/chat/${sessionId}#k=${key}`;

export function presentSession(row: SessionRow, customerLink: string | null = null): SessionOut {
  return {
    id: row.id,
    status: row.status,
    agent_language: row.agent_language,
    agent_name: row.agent_name,
    customer_language: row.customer_language,
    customer_name: row.customer_name,
    customer_last_seen_at: iso(row.customer_last_seen_at),
    customer_url: customerLink,
    external_id: row.external_id,
    metadata: row.metadata,
    retention_days: row.retention_days,
    livemode: row.mode === 'live',
    created_at: row.created_at.toISOString(),
    closed_at: iso(row.closed_at),
  };
}

export interface NewSession {
  agent_language: string;
  agent_name?: string | null;
  customer_language?: string | null;
  customer_name?: string | null;
  external_id?: string | null;
  metadata?: Metadata;
  retention_days?: number | null;
}

/** The events of a session carry its metadata; the session object itself is their data. */
export const sessionEvent = <T extends EventType>(row: SessionRow, type: T, data: EventData<T>): NewEvent =>
  newEvent({ orgId: row.org_id, mode: row.mode, type, metadata: row.metadata, data, sessionId: row.id });

export async function createSession(deps: SessionDeps, payer: Payer, input: NewSession): Promise<SessionOut> {
  const key = newSecret('chk_');
  const row = await withEvents(deps, async (trx, emit) => {
    const [created] = await trx<SessionRow>('sessions')
      .insert({
        id: newId('ses'),
        org_id: payer.orgId,
        mode: payer.mode,
        status: 'open',
        agent_language: input.agent_language,
        agent_name: input.agent_name ?? DEFAULT_AGENT_NAME,
        customer_language: input.customer_language ?? null,
        customer_name: input.customer_name ?? null,
        customer_key_hash: hashSecret(key),
        external_id: input.external_id ?? null,
        metadata: JSON.stringify(input.metadata ?? {}) as never,
        retention_days: input.retention_days ?? null,
      })
      .returning('*');
    await emit(sessionEvent(created, 'session.created', presentSession(created)));
    return created;
  });
  return presentSession(row, customerUrl(deps.config.publicBaseUrl, row.id, key));
}

export const findSession = (db: Knex, payer: Payer, sessionId: string, lock = false) =>
  findOwned<SessionRow>(db, 'sessions', payer, sessionId, 'session', lock);

export const sessionClosed = () => errors.conflict('the session is closed');

export function assertOpen(session: SessionRow): void {
  if (session.status !== 'open') throw sessionClosed();
}

export interface SessionFilter {
  status?: 'open' | 'closed';
  external_id?: string;
  limit?: number;
}

export async function listSessions(db: Knex, payer: Payer, filter: SessionFilter): Promise<SessionOut[]> {
  return (await listOwned<SessionRow>(db, 'sessions', payer, filter)).map((row) => presentSession(row));
}

export async function closeSession(deps: SessionDeps, payer: Payer, sessionId: string): Promise<SessionOut> {
  const row = await withEvents(deps, async (trx, emit) => {
    assertOpen(await findSession(trx, payer, sessionId, true));
    const [closed] = await trx<SessionRow>('sessions')
      .where({ id: sessionId })
      .update({ status: 'closed', closed_at: trx.fn.now() as never })
      .returning('*');
    await emit(sessionEvent(closed, 'session.closed', presentSession(closed)));
    return closed;
  });
  return presentSession(row);
}

/** A new customer link: the earlier one (and any page or stream opened with it) stops at once. */
export async function rotateCustomerLink(deps: SessionDeps, payer: Payer, sessionId: string): Promise<SessionOut> {
  const key = newSecret('chk_');
  const row = await withEvents(deps, async (trx, emit) => {
    assertOpen(await findSession(trx, payer, sessionId, true));
    const [updated] = await trx<SessionRow>('sessions')
      .where({ id: sessionId })
      .update({ customer_key_hash: hashSecret(key) })
      .returning('*');
    await emit(sessionEvent(updated, 'session.link_rotated', presentSession(updated)));
    return updated;
  });
  return presentSession(row, customerUrl(deps.config.publicBaseUrl, row.id, key));
}

/** Erases the session, its messages, recordings and the events that carried them, for good. */
export async function deleteSession(deps: SessionDeps, payer: Payer, sessionId: string): Promise<void> {
  await withEvents(deps, async (trx, emit) => {
    const session = await findSession(trx, payer, sessionId, true);
    await trx('events').where({ session_id: sessionId }).del();
    await trx('sessions').where({ id: sessionId }).del();
    await emit(sessionEvent(session, 'session.deleted', { id: session.id, deleted: true }));
  });
}

/** The session a customer's chat key opens; a missing, wrong or superseded key is 401. */
export async function sessionForCustomer(db: Knex, sessionId: string, key: string | undefined): Promise<SessionRow> {
  const row = await db<SessionRow>('sessions').where({ id: sessionId }).first();
  if (!row) throw errors.notFound('session');
  if (!key || hashSecret(key) !== row.customer_key_hash) throw errors.invalidChatKey();
  return row;
}

export async function markCustomerSeen(db: Knex, sessionId: string): Promise<void> {
  await db('sessions').where({ id: sessionId }).update({ customer_last_seen_at: db.fn.now() });
}
