// A connection: one organization's approval of one app, with the scopes granted. It is what the app's
// tokens act as on /v1 (always live mode, its own rate limit). Revoking it (the app revoked a token,
// a code or refresh token was replayed, the organization or operator removed the app) stops every code
// and token of it at once, and the revocation bus ends the streams it opened, on every instance.
import type { Knex } from 'knex';
import type { Scope } from '../auth/principal.js';
import type { RevocationBus } from '../auth/revocation.js';
import { newId } from '../lib/ids.js';

export interface ConnectionRow {
  id: string;
  org_id: string;
  client_id: string;
  scopes: Scope[];
  approved_by: string | null;
  created_at: Date;
  activated_at: Date | null;
  revoked_at: Date | null;
  revoked_reason: string | null;
}

export async function createConnection(
  db: Knex,
  approval: { orgId: string; clientId: string; scopes: Scope[]; memberId: string | null },
): Promise<ConnectionRow> {
  const [row] = await db<ConnectionRow>('oauth_connections')
    .insert({ id: newId('conn'), org_id: approval.orgId, client_id: approval.clientId, scopes: approval.scopes, approved_by: approval.memberId })
    .returning('*');
  return row;
}

export async function isConnectionActive(db: Knex, connectionId: string): Promise<boolean> {
  return (await db<ConnectionRow>('oauth_connections').where({ id: connectionId }).whereNull('revoked_at').first('id')) !== undefined;
}

/**
 * Revokes the active connections that match `where`, then announces each (after the update committed,
 * so that no instance looks one up again and finds it still active).
 */
export async function revokeConnections(
  deps: { db: Knex; revocations: RevocationBus },
  where: Partial<Pick<ConnectionRow, 'id' | 'org_id' | 'client_id'>>,
  reason: string,
  except?: string,
): Promise<void> {
  const query = deps.db<ConnectionRow>('oauth_connections').where(where).whereNull('revoked_at');
  if (except) query.whereNot({ id: except });
  const revoked = await query.update({ revoked_at: deps.db.fn.now(), revoked_reason: reason }).returning('id');
  await Promise.all(revoked.map((row) => deps.revocations.announce(row.id)));
}

/** An app an organization has connected (its code exchanged, not revoked), as the console lists it. */
export interface ConnectedApp {
  connectionId: string;
  clientId: string;
  appName: string;
  scopes: Scope[];
  since: Date;
  /** Who allowed it: the member's email; null when that member has been removed since (the connection stays). */
  approvedBy: string | null;
}

export async function listConnectedApps(db: Knex, orgId: string): Promise<ConnectedApp[]> {
  const rows = await db('oauth_connections as c')
    .join('oauth_apps as a', 'a.client_id', 'c.client_id')
    .leftJoin('members as m', 'm.id', 'c.approved_by')
    .where('c.org_id', orgId)
    .whereNotNull('c.activated_at')
    .whereNull('c.revoked_at')
    .whereNull('a.deleted_at')
    .orderBy([
      { column: 'c.activated_at', order: 'desc' },
      { column: 'c.id', order: 'desc' },
    ])
    .select('c.id', 'c.client_id', 'a.name', 'c.scopes', 'c.activated_at', 'm.email as approved_by_email');
  return rows.map((row) => ({
    connectionId: row.id,
    clientId: row.client_id,
    appName: row.name,
    scopes: row.scopes,
    since: new Date(row.activated_at),
    approvedBy: row.approved_by_email ?? null,
  }));
}
