// Apps that many organizations install: registered by the operator with the exact redirect URIs they
// may use and the most they may ask for. A confidential app authenticates with a secret (shown once,
// stored hashed); a public app (a mobile or single-page app) has none and must use PKCE.
import { timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { ALL_SCOPES, type Scope } from '../auth/principal.js';
import type { RevocationBus } from '../auth/revocation.js';
import { errors } from '../errors.js';
import { hashSecret, newId, newSecret } from '../lib/ids.js';
import { revokeConnections } from './connections.js';

export type ClientType = 'confidential' | 'public';

export interface AppRow {
  client_id: string;
  name: string;
  client_type: ClientType;
  secret_hash: string | null;
  redirect_uris: string[];
  scopes: Scope[];
  created_at: Date;
  deleted_at: Date | null;
}

export interface NewApp {
  name: string;
  redirect_uris: string[];
  scopes: Scope[];
  client_type?: ClientType;
}

export interface CreatedApp {
  client_id: string;
  client_secret: string | null;
  name: string;
  redirect_uris: string[];
  scopes: Scope[];
  client_type: ClientType;
  created_at: string;
}

/**
 * A redirect URI an app may register: https anywhere, http only back to the user's own machine
 * (native apps, RFC 8252), never with a fragment. Answers why not, or null.
 */
export function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.hash || uri.includes('#')) return 'must not have a fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return null;
  return 'must be https (or http://127.0.0.1, http://localhost)';
}

export async function createApp(db: Knex, app: NewApp): Promise<CreatedApp> {
  const issues = app.redirect_uris.flatMap((uri, index) => {
    const problem = redirectUriProblem(uri);
    return problem ? [{ loc: ['body', 'redirect_uris', index], msg: `the redirect URI ${problem}`, type: 'redirect_uri_invalid' }] : [];
  });
  if (issues.length) throw errors.invalid(issues);
  const clientType = app.client_type ?? 'confidential';
  const secret = clientType === 'confidential' ? newSecret('spk_cs_') : null;
  const scopes = ALL_SCOPES.filter((scope) => app.scopes.includes(scope));
  const [row] = await db<AppRow>('oauth_apps')
    .insert({
      client_id: newId('app'),
      name: app.name,
      client_type: clientType,
      secret_hash: secret && hashSecret(secret),
      redirect_uris: [...new Set(app.redirect_uris)],
      scopes,
    })
    .returning('*');
  return {
    client_id: row.client_id,
    client_secret: secret,
    name: row.name,
    redirect_uris: row.redirect_uris,
    scopes: row.scopes,
    client_type: row.client_type,
    created_at: row.created_at.toISOString(),
  };
}

/** An app that may still be used (not deleted), or undefined. */
export async function findApp(db: Knex, clientId: string): Promise<AppRow | undefined> {
  return db<AppRow>('oauth_apps').where({ client_id: clientId }).whereNull('deleted_at').first();
}

/** Whether `secret` is the app's client secret (compared in constant time). */
export function secretMatches(app: AppRow, secret: string): boolean {
  if (!app.secret_hash) return false;
  return timingSafeEqual(Buffer.from(hashSecret(secret), 'hex'), Buffer.from(app.secret_hash, 'hex'));
}

/** Deletes the app: every connection, code and token of it stops at once. */
export async function deleteApp(deps: { db: Knex; revocations: RevocationBus }, clientId: string): Promise<void> {
  const deleted = await deps.db<AppRow>('oauth_apps').where({ client_id: clientId }).whereNull('deleted_at').update({ deleted_at: deps.db.fn.now() });
  if (!deleted && !(await deps.db<AppRow>('oauth_apps').where({ client_id: clientId }).first('client_id'))) throw errors.notFound('app');
  await revokeConnections(deps, { client_id: clientId }, 'app deleted');
}
