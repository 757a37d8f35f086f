// An app's access token on /v1: the connection it belongs to acts, in live mode, with the token's
// scopes, counted in the connection's own rate limit. Looked up through the same cache as API keys
// (forgotten when the connection's revocation is announced); expiry is checked on every request.
import type { Knex } from 'knex';
import type { AppPrincipal, Scope } from '../auth/principal.js';
import type { PrincipalCache } from '../auth/principalCache.js';
import { errors } from '../errors.js';
import { hashSecret } from '../lib/ids.js';
import { ACCESS_TOKEN_PREFIX } from './lifetimes.js';

const ACCESS_TOKEN = new RegExp(`^${ACCESS_TOKEN_PREFIX}[0-9A-Za-z]{16,200}$`);

export const isAccessToken = (presented: string) => presented.startsWith(ACCESS_TOKEN_PREFIX);

export async function authenticateAccessToken(
  deps: { db: Knex; principals: PrincipalCache; now: () => number },
  presented: string,
): Promise<AppPrincipal> {
  if (!ACCESS_TOKEN.test(presented)) throw errors.invalidAccessToken();
  const tokenHash = hashSecret(presented);
  const principal = await deps.principals.principalFor(tokenHash, () => activeToken(deps.db, tokenHash));
  if (!principal || principal.kind !== 'app' || principal.expiresAt <= deps.now()) throw errors.invalidAccessToken();
  return principal;
}

async function activeToken(db: Knex, tokenHash: string): Promise<AppPrincipal | undefined> {
  const row = await db('oauth_tokens')
    .join('oauth_connections', 'oauth_connections.id', 'oauth_tokens.connection_id')
    .join('oauth_apps', 'oauth_apps.client_id', 'oauth_connections.client_id')
    .where({ 'oauth_tokens.token_hash': tokenHash, 'oauth_tokens.kind': 'access' })
    .whereNull('oauth_connections.revoked_at')
    .whereNull('oauth_apps.deleted_at')
    .first<{ scopes: Scope[]; expires_at: Date; connection_id: string; org_id: string; client_id: string } | undefined>(
      'oauth_tokens.scopes',
      'oauth_tokens.expires_at',
      'oauth_tokens.connection_id',
      'oauth_connections.org_id',
      'oauth_connections.client_id',
    );
  return (
    row && {
      kind: 'app',
      connectionId: row.connection_id,
      appId: row.client_id,
      orgId: row.org_id,
      mode: 'live',
      scopes: row.scopes,
      rateLimitKey: `app:${row.connection_id}`,
      expiresAt: row.expires_at.getTime(),
    }
  );
}
