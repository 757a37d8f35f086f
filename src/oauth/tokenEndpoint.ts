// POST /oauth2/token and POST /oauth2/revoke. The token grant itself is @node-oauth/oauth2-server's
// (client authentication by Basic or form, the authorization-code grant with PKCE, the refresh grant
// with rotation); ./model.ts stores what it issues. Answers and errors in this API's shape: RFC 6749
// bodies plus `detail`, `Cache-Control: no-store`, `expires_in` exactly the lifetime.
import OAuth2Server, { OAuthError } from '@node-oauth/oauth2-server';
import type { Knex } from 'knex';
import type { RevocationBus } from '../auth/revocation.js';
import { errors } from '../errors.js';
import { hashSecret } from '../ids.js';
import { revokeConnections } from './connections.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS, REFRESH_TOKEN_LIFETIME_SECONDS } from './lifetimes.js';
import { tokenModel } from './model.js';

type Deps = { db: Knex; revocations: RevocationBus };

/** The form fields of both endpoints, as the contract validated them. */
type Form = Record<string, string | null | undefined>;

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

function server(deps: Deps): OAuth2Server {
  return new OAuth2Server({
    model: tokenModel(deps),
    accessTokenLifetime: ACCESS_TOKEN_LIFETIME_SECONDS,
    refreshTokenLifetime: REFRESH_TOKEN_LIFETIME_SECONDS,
    // The model refuses a confidential app without its secret; a public app has none.
    requireClientAuthentication: { authorization_code: false, refresh_token: false },
  });
}

/**
 * The library's request: only what the grant reads (the client's Basic credentials and the form).
 * RFC 6749 2.3.1 has clients form-urlencode their id and secret inside Basic (oauth4webapi and
 * openid-client do); the library reads them raw, so they reach it decoded.
 */
function libraryRequest(authorization: string | null, form: Form): OAuth2Server.Request {
  const body = Object.fromEntries(Object.entries(form).filter(([, value]) => typeof value === 'string' && value !== ''));
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1' };
  if (authorization) {
    const credentials = basicCredentials(authorization);
    headers.authorization = credentials ? `Basic ${Buffer.from(`${credentials.id}:${credentials.secret}`).toString('base64')}` : authorization;
  }
  return new OAuth2Server.Request({ method: 'POST', headers, query: {}, body });
}

/** An error of the library in this API's words; anything else (the database down) is not the client's. */
function fromLibrary(err: unknown, response: OAuth2Server.Response): unknown {
  if (!(err instanceof OAuthError) || err.name === 'server_error') return (err as { inner?: unknown }).inner ?? err;
  const status = err.code === 401 ? 401 : 400;
  const challenge = response.get('WWW-Authenticate');
  return errors.oauth(status, err.name, err.message, challenge ? { 'WWW-Authenticate': challenge } : {});
}

export async function issueTokens(deps: Deps, authorization: string | null, form: Form): Promise<TokenAnswer> {
  const response = new OAuth2Server.Response();
  try {
    const token = await server(deps).token(libraryRequest(authorization, form), response);
    return {
      access_token: token.accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_LIFETIME_SECONDS,
      refresh_token: token.refreshToken!,
      scope: (token.scope ?? []).join(' '),
    };
  } catch (err) {
    throw fromLibrary(err, response);
  }
}

/** HTTP Basic credentials (RFC 6749 2.3.1: each part form-urlencoded), or null when unreadable. */
function basicCredentials(authorization: string): { id: string; secret: string } | null {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  const decoded = basic ? Buffer.from(basic[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 1) return null;
  try {
    return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

/** The client a request authenticates as (Basic, or client_id and client_secret in the form). */
async function authenticatedClient(deps: Deps, authorization: string | null, form: Form): Promise<string> {
  const credentials = authorization ? basicCredentials(authorization) : form.client_id ? { id: form.client_id, secret: form.client_secret ?? '' } : null;
  const client = credentials && (await tokenModel(deps).getClient(credentials.id, credentials.secret));
  if (client) return client.id;
  throw authorization
    ? errors.oauth(401, 'invalid_client', 'client authentication failed', { 'WWW-Authenticate': 'Basic realm="oauth2"' })
    : errors.oauth(400, 'invalid_client', 'client authentication failed');
}

/**
 * RFC 7009: revokes the connection of an access or refresh token issued to this client; answers the
 * same whether or not there was such a token (a client learns nothing about other tokens).
 */
export async function revokeToken(deps: Deps, authorization: string | null, form: Form): Promise<void> {
  const clientId = await authenticatedClient(deps, authorization, form);
  const token = String(form.token ?? '');
  const row = await deps.db('oauth_tokens')
    .join('oauth_connections', 'oauth_connections.id', 'oauth_tokens.connection_id')
    .where({ 'oauth_tokens.token_hash': hashSecret(token), 'oauth_connections.client_id': clientId })
    .first<{ connection_id: string } | undefined>('oauth_tokens.connection_id');
  if (row) await revokeConnections(deps, { id: row.connection_id }, 'revoked by the app');
}
