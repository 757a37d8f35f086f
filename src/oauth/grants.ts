// The token endpoint's two grants: an authorization code (RFC 6749 4.1.3, PKCE RFC 7636) and a refresh
// token (RFC 6749 6), which rotates on every use (RFC 9700 4.14.2).
//
// Every check that can refuse a request runs before the code or refresh token is used up, so a refused
// request leaves the grant as it was and the app can send a correct one (RFC 6749 5.2). The one
// exception is deliberate: a code presented with a wrong or missing PKCE verifier is used up. PKCE is
// what keeps a stolen code useless (RFC 9700 2.1.1), and a code that outlived a failed verifier would
// let whoever holds it keep guessing; the app starts the authorization again.
//
// Using up is a conditional UPDATE in the transaction that stores the new tokens, while that
// transaction holds the connection's row: of two requests with the same code or refresh token exactly
// one gets tokens, and the other finds it used, which is a replay that revokes the connection (whoever
// replays it may have stolen it). A revocation of the connection waits for the row, then stops the new
// tokens too.
import type { Knex } from 'knex';
import { ALL_SCOPES, type Scope } from '../auth/principal.js';
import type { RevocationBus } from '../auth/revocation.js';
import { errors } from '../errors.js';
import { hashSecret, newSecret } from '../lib/ids.js';
import type { AppRow } from './apps.js';
import { formField, type Form } from './clientAuthentication.js';
import { revokeConnections, type ConnectionRow } from './connections.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS, ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_LIFETIME_SECONDS, REFRESH_TOKEN_PREFIX } from './lifetimes.js';
import { verifierMatches } from './pkce.js';

export type GrantDeps = { db: Knex; revocations: RevocationBus; now: () => number };

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  /** What the access token may do: the grant's scopes, or fewer when a refresh asked for fewer. */
  scopes: Scope[];
}

interface CodeRow {
  code_hash: string;
  connection_id: string;
  redirect_uri: string;
  redirect_uri_sent: boolean;
  code_challenge: string | null;
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

/** A code or refresh token as presented, with the connection it belongs to. */
type Presented<Row> = Row & Pick<ConnectionRow, 'client_id' | 'org_id' | 'revoked_at'> & { granted: Scope[] };

/** What is presented, where it is kept, and the reason a second use revokes its connection for. */
interface Credential {
  name: string;
  table: 'oauth_codes' | 'oauth_tokens';
  column: 'code_hash' | 'token_hash';
  replayed: string;
}
const CODE: Credential = { name: 'authorization code', table: 'oauth_codes', column: 'code_hash', replayed: 'authorization code replayed' };
const REFRESH_TOKEN: Credential = { name: 'refresh token', table: 'oauth_tokens', column: 'token_hash', replayed: 'refresh token reused' };

const invalidGrant = (description: string) => errors.oauth(400, 'invalid_grant', description);

function required(form: Form, name: string): string {
  const value = formField(form, name);
  if (value === null) throw errors.oauth(400, 'invalid_request', `the form needs ${name}`);
  return value;
}

/**
 * The code or refresh token with this hash, checked in this order: issued to this app (an unknown one
 * and another app's get the same answer), not used before (a second use is a replay, and revokes the
 * connection), its connection not revoked, not expired.
 */
async function presented<Row extends { connection_id: string; used_at: Date | null; expires_at: Date }>(
  deps: GrantDeps,
  app: AppRow,
  credential: Credential,
  where: Record<string, string>,
): Promise<Presented<Row>> {
  const row = (await deps.db(`${credential.table} as presented`)
    .join('oauth_connections as c', 'c.id', 'presented.connection_id')
    .where(Object.fromEntries(Object.entries(where).map(([column, value]) => [`presented.${column}`, value])))
    .first('presented.*', 'c.client_id', 'c.org_id', 'c.revoked_at', 'c.scopes as granted')) as Presented<Row> | undefined;
  if (!row || row.client_id !== app.client_id) throw invalidGrant(`the ${credential.name} is not valid (unknown, or issued to another app)`);
  if (row.used_at) {
    await revokeConnections(deps, { id: row.connection_id }, credential.replayed);
    throw invalidGrant(`the ${credential.name} was used before: the app's connection is revoked, and every token of it`);
  }
  if (row.revoked_at) throw invalidGrant(`the ${credential.name} belongs to a connection that has been revoked`);
  if (row.expires_at.getTime() <= deps.now()) throw invalidGrant(`the ${credential.name} has expired`);
  return row;
}

export async function exchangeCode(deps: GrantDeps, app: AppRow, form: Form): Promise<IssuedTokens> {
  const codeHash = hashSecret(required(form, 'code'));
  const code = await presented<CodeRow>(deps, app, CODE, { code_hash: codeHash });

  // RFC 6749 4.1.3: required only if the authorization request named it; always the same when sent.
  const redirectUri = formField(form, 'redirect_uri');
  if (redirectUri === null && code.redirect_uri_sent) {
    throw errors.oauth(400, 'invalid_request', 'the form needs redirect_uri: the authorization request named it');
  }
  if (redirectUri !== null && redirectUri !== code.redirect_uri) {
    throw invalidGrant('redirect_uri is not the one the authorization request was answered on');
  }

  if (!verifierMatches(code.code_challenge, formField(form, 'code_verifier'))) {
    await refuseUnlessDone(deps, CODE, code, await useUp(deps, CODE, codeHash, code, null));
    throw invalidGrant(
      code.code_challenge
        ? 'code_verifier is missing or does not match the code_challenge; the code is used up: start the authorization again'
        : 'the authorization request sent no code_challenge, so the token request must send no code_verifier; the code is used up',
    );
  }
  const tokens = newTokens(code.granted);
  await refuseUnlessDone(deps, CODE, code, await useUp(deps, CODE, codeHash, code, tokens));
  // A new approval, used for the first time, replaces the organization's older connection to the app.
  await revokeConnections(deps, { org_id: code.org_id, client_id: app.client_id }, 'replaced by a new approval', code.connection_id);
  return tokens;
}

export async function refreshTokens(deps: GrantDeps, app: AppRow, form: Form): Promise<IssuedTokens> {
  const tokenHash = hashSecret(required(form, 'refresh_token'));
  const refresh = await presented<TokenRow>(deps, app, REFRESH_TOKEN, { token_hash: tokenHash, kind: 'refresh' });

  // RFC 6749 6: fewer scopes than granted may be asked for this access token; the new refresh token
  // still carries the whole grant, so that a refresh without scope gets all of it again.
  const asked = (formField(form, 'scope') ?? '').split(' ').filter(Boolean);
  const beyond = asked.filter((scope) => !refresh.granted.includes(scope as Scope));
  if (beyond.length) throw errors.oauth(400, 'invalid_scope', `not granted to this connection: ${beyond.join(' ')}`);
  const tokens = newTokens(asked.length ? ALL_SCOPES.filter((scope) => asked.includes(scope)) : refresh.granted);

  await refuseUnlessDone(deps, REFRESH_TOKEN, refresh, await useUp(deps, REFRESH_TOKEN, tokenHash, refresh, tokens));
  return tokens;
}

const newTokens = (scopes: Scope[]): IssuedTokens => ({ accessToken: newSecret(ACCESS_TOKEN_PREFIX), refreshToken: newSecret(REFRESH_TOKEN_PREFIX), scopes });

/** How using up went: `replayed`, another request used it first; `revoked`, the connection was revoked meanwhile. */
type Outcome = 'done' | 'replayed' | 'revoked';

/** A replay revokes the connection; it and a revoked connection are invalid_grant. */
async function refuseUnlessDone(deps: GrantDeps, credential: Credential, grant: { connection_id: string }, outcome: Outcome): Promise<void> {
  if (outcome === 'done') return;
  if (outcome === 'replayed') {
    await revokeConnections(deps, { id: grant.connection_id }, credential.replayed);
    throw invalidGrant(`the ${credential.name} was used by another request at the same time: the app's connection is revoked, and every token of it`);
  }
  throw invalidGrant(`the ${credential.name} belongs to a connection that has been revoked`);
}

/**
 * Uses the code or refresh token up and stores the new tokens (none for a code whose verifier failed),
 * in one transaction holding the connection's row. Nothing changes unless the outcome is `done`. The
 * new refresh token carries the whole grant, whatever its access token asked for.
 */
async function useUp(
  deps: GrantDeps,
  credential: Credential,
  hash: string,
  grant: { connection_id: string; granted: Scope[] },
  tokens: IssuedTokens | null,
): Promise<Outcome> {
  return deps.db.transaction(async (trx) => {
    const connection = await trx<ConnectionRow>('oauth_connections').where({ id: grant.connection_id }).whereNull('revoked_at').forUpdate().first('activated_at');
    if (!connection) return 'revoked';
    const usedUp = await trx(credential.table).where(credential.column, hash).whereNull('used_at').update({ used_at: trx.fn.now() });
    if (usedUp !== 1) return 'replayed';
    if (!tokens) return 'done';
    if (!connection.activated_at) await trx<ConnectionRow>('oauth_connections').where({ id: grant.connection_id }).update({ activated_at: trx.fn.now() as never });
    const now = deps.now();
    await trx<TokenRow>('oauth_tokens').insert([
      {
        token_hash: hashSecret(tokens.accessToken),
        kind: 'access',
        connection_id: grant.connection_id,
        scopes: tokens.scopes,
        expires_at: new Date(now + ACCESS_TOKEN_LIFETIME_SECONDS * 1000),
      },
      {
        token_hash: hashSecret(tokens.refreshToken),
        kind: 'refresh',
        connection_id: grant.connection_id,
        scopes: grant.granted,
        expires_at: new Date(now + REFRESH_TOKEN_LIFETIME_SECONDS * 1000),
      },
    ]);
    return 'done';
  });
}
