// POST /oauth2/token and POST /oauth2/revoke: the app authenticates (./clientAuthentication.ts), then
// its grant is checked and answered (./grants.ts). Answers and errors in this API's shape: RFC 6749
// bodies plus `detail`, `Cache-Control: no-store`, `expires_in` exactly the lifetime.
import { errors } from '../errors.js';
import { hashSecret } from '../lib/ids.js';
import { authenticateClient, formField, type Form } from './clientAuthentication.js';
import { revokeConnections } from './connections.js';
import { exchangeCode, refreshTokens, type GrantDeps } from './grants.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from './lifetimes.js';

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const GRANTS = { authorization_code: exchangeCode, refresh_token: refreshTokens };

export async function issueTokens(deps: GrantDeps, authorization: string | null, form: Form): Promise<TokenAnswer> {
  const app = await authenticateClient(deps.db, authorization, form);
  const grantType = formField(form, 'grant_type');
  if (grantType === null) throw errors.oauth(400, 'invalid_request', 'the form needs grant_type');
  if (!Object.hasOwn(GRANTS, grantType)) {
    throw errors.oauth(400, 'unsupported_grant_type', `grant_type must be ${Object.keys(GRANTS).join(' or ')}`);
  }
  const tokens = await GRANTS[grantType as keyof typeof GRANTS](deps, app, form);
  return {
    access_token: tokens.accessToken,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_LIFETIME_SECONDS,
    refresh_token: tokens.refreshToken,
    scope: tokens.scopes.join(' '),
  };
}

/**
 * RFC 7009: revokes the connection of an access or refresh token issued to this client; answers the
 * same whether or not there was such a token (a client learns nothing about other tokens).
 */
export async function revokeToken(deps: Omit<GrantDeps, 'now'>, authorization: string | null, form: Form): Promise<void> {
  const app = await authenticateClient(deps.db, authorization, form);
  const token = String(form.token ?? '');
  const row = await deps.db('oauth_tokens')
    .join('oauth_connections', 'oauth_connections.id', 'oauth_tokens.connection_id')
    .where({ 'oauth_tokens.token_hash': hashSecret(token), 'oauth_connections.client_id': app.client_id })
    .first<{ connection_id: string } | undefined>('oauth_tokens.connection_id');
  if (row) await revokeConnections(deps, { id: row.connection_id }, 'revoked by the app');
}
