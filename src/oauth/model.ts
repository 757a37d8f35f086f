// The storage side of the token endpoint, as @node-oauth/oauth2-server asks for it (its "model"): the
// library checks the grant (client binding, PKCE, redirect URI, expiry, scope narrowing); this model
// finds and stores codes and tokens, by hash only, and adds what the library leaves to it:
//   - a code or refresh token presented a second time revokes the whole connection (RFC 9700 4.14:
//     whoever replays it may have stolen it, and the legitimate holder then learns of it at once);
//   - single use is enforced by the database (an UPDATE that only one request can win);
//   - tokens are saved only while their connection is active, and the first tokens of a new approval
//     replace the organization's older connection to the same app.
import OAuth2Server, { InvalidGrantError } from '@node-oauth/oauth2-server';
import type { Knex } from 'knex';
import type { Scope } from '../auth/principal.js';
import type { RevocationBus } from '../auth/revocation.js';
import { hashSecret, newSecret } from '../ids.js';
import { findApp, secretMatches, type AppRow } from './apps.js';
import { revokeConnections, type ConnectionRow } from './connections.js';
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX } from './lifetimes.js';

type Deps = { db: Knex; revocations: RevocationBus };

/** Who a code or token acts for: the connection (the "user" of the library). */
interface ConnectionUser {
  connectionId: string;
  orgId: string;
}

const GRANTS = ['authorization_code', 'refresh_token'];

const clientOf = (app: AppRow): OAuth2Server.Client => ({ id: app.client_id, grants: GRANTS, redirectUris: app.redirect_uris });

interface CodeRow {
  code_hash: string;
  connection_id: string;
  redirect_uri: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  expires_at: Date;
  used_at: Date | null;
}

interface TokenRow {
  token_hash: string;
  kind: 'access' | 'refresh';
  connection_id: string;
  scopes: Scope[];
  expires_at: Date;
  used_at: Date | null;
}

export function tokenModel(deps: Deps): OAuth2Server.AuthorizationCodeModel & OAuth2Server.RefreshTokenModel {
  const { db } = deps;
  const revoke = (connectionId: string, reason: string) => revokeConnections(deps, { id: connectionId }, reason);

  /** The active connection a code or token belongs to, with its app. */
  const activeConnection = (connectionId: string) =>
    db<ConnectionRow>('oauth_connections')
      .join('oauth_apps', 'oauth_apps.client_id', 'oauth_connections.client_id')
      .where('oauth_connections.id', connectionId)
      .whereNull('oauth_connections.revoked_at')
      .whereNull('oauth_apps.deleted_at')
      .first<ConnectionRow | undefined>('oauth_connections.*');

  return {
    /**
     * A confidential app must present its secret; a public app has none (the library lets a request
     * without a secret through only for a PKCE code exchange or a refresh, which is all a public app does).
     */
    async getClient(clientId, clientSecret) {
      const app = await findApp(db, clientId);
      if (!app) return null;
      if (app.client_type === 'public') return clientSecret ? null : clientOf(app);
      return clientSecret && secretMatches(app, clientSecret) ? clientOf(app) : null;
    },

    generateAccessToken: async () => newSecret(ACCESS_TOKEN_PREFIX),
    generateRefreshToken: async () => newSecret(REFRESH_TOKEN_PREFIX),

    async getAuthorizationCode(code) {
      const row = await db<CodeRow>('oauth_codes').where({ code_hash: hashSecret(code) }).first();
      if (!row) return null;
      if (row.used_at) {
        await revoke(row.connection_id, 'authorization code replayed');
        return null;
      }
      const connection = await activeConnection(row.connection_id);
      if (!connection) return null;
      const user: ConnectionUser = { connectionId: connection.id, orgId: connection.org_id };
      return {
        authorizationCode: code,
        expiresAt: row.expires_at,
        redirectUri: row.redirect_uri,
        scope: connection.scopes,
        client: { id: connection.client_id, grants: GRANTS },
        user,
        ...(row.code_challenge ? { codeChallenge: row.code_challenge, codeChallengeMethod: row.code_challenge_method ?? 'S256' } : {}),
      };
    },

    /** Single use: of two requests with the same code, one wins; the other is a replay. */
    async revokeAuthorizationCode(code) {
      const used = await db<CodeRow>('oauth_codes')
        .where({ code_hash: hashSecret(code.authorizationCode) })
        .whereNull('used_at')
        .update({ used_at: db.fn.now() });
      if (used === 1) return true;
      await revoke((code.user as ConnectionUser).connectionId, 'authorization code replayed');
      return false;
    },

    // The scopes of a code are the connection's; nothing to narrow at the exchange.
    validateScope: async (_user, _client, scope) => scope ?? [],

    async getRefreshToken(refreshToken) {
      const row = await db<TokenRow>('oauth_tokens').where({ token_hash: hashSecret(refreshToken), kind: 'refresh' }).first();
      if (!row) return null;
      if (row.used_at) {
        await revoke(row.connection_id, 'refresh token reused');
        return null;
      }
      const connection = await activeConnection(row.connection_id);
      if (!connection) return null;
      const user: ConnectionUser = { connectionId: connection.id, orgId: connection.org_id };
      return { refreshToken, refreshTokenExpiresAt: row.expires_at, scope: row.scopes, client: { id: connection.client_id, grants: GRANTS }, user };
    },

    /** Rotation: a refresh token works once; of two requests with it, the loser is a reuse. */
    async revokeToken(token) {
      const used = await db<TokenRow>('oauth_tokens')
        .where({ token_hash: hashSecret(token.refreshToken), kind: 'refresh' })
        .whereNull('used_at')
        .update({ used_at: db.fn.now() });
      if (used === 1) return true;
      await revoke((token.user as ConnectionUser).connectionId, 'refresh token reused');
      return false;
    },

    async saveToken(token, client, user) {
      const { connectionId, orgId } = user as ConnectionUser;
      const scopes = (token.scope ?? []) as Scope[];
      const issued = await db.transaction(async (trx) => {
        // Locked: a revocation of the connection waits for these tokens, then stops them too.
        const connection = await trx<ConnectionRow>('oauth_connections').where({ id: connectionId }).whereNull('revoked_at').forUpdate().first('activated_at');
        if (!connection) return null;
        if (!connection.activated_at) await trx<ConnectionRow>('oauth_connections').where({ id: connectionId }).update({ activated_at: trx.fn.now() as never });
        await trx<TokenRow>('oauth_tokens').insert([
          { token_hash: hashSecret(token.accessToken), kind: 'access', connection_id: connectionId, scopes, expires_at: token.accessTokenExpiresAt! },
          { token_hash: hashSecret(token.refreshToken!), kind: 'refresh', connection_id: connectionId, scopes, expires_at: token.refreshTokenExpiresAt! },
        ]);
        return connection.activated_at ? 'refreshed' : 'activated';
      });
      // Revoked meanwhile (a replay of its code, the app deleted): nothing was issued.
      if (!issued) throw new InvalidGrantError('Invalid grant: the connection has been revoked');
      // A new approval of the app, used for the first time, replaces the organization's older connection to it.
      if (issued === 'activated') await revokeConnections(deps, { org_id: orgId, client_id: client.id }, 'replaced by a new approval', connectionId);
      return { ...token, client, user };
    },

    // Access tokens are checked by the /v1 authentication (./accessTokens.ts), not by the library.
    getAccessToken: async () => null,
    saveAuthorizationCode: async () => null,
  };
}
