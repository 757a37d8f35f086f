// The authorization request (RFC 6749 4.1.1 with PKCE, RFC 7636), checked the same way when the consent
// page is shown and when its form comes back, and the code an approval issues.
import type { Knex } from 'knex';
import { ALL_SCOPES, type Scope } from '../auth/principal.js';
import { hashSecret, newSecret } from '../lib/ids.js';
import { findApp, type AppRow } from './apps.js';
import { createConnection } from './connections.js';
import { CODE_LIFETIME_SECONDS, CODE_PREFIX } from './lifetimes.js';
import { PKCE_VALUE } from './pkce.js';

/** The request's parameters as received (query of the page, or hidden fields of its form). */
export type AuthorizationParams = Partial<Record<'response_type' | 'client_id' | 'redirect_uri' | 'scope' | 'state' | 'code_challenge' | 'code_challenge_method', unknown>>;

export interface AuthorizationRequest {
  app: AppRow;
  redirectUri: string;
  /** The request named redirect_uri (else the app's only one is used), so the token request must too. */
  redirectUriSent: boolean;
  scopes: Scope[];
  state: string | null;
  codeChallenge: string | null;
}

/**
 * Why the request cannot go on:
 * - `page`: the app or its redirect URI cannot be trusted, so the browser must not be sent there
 *   (an error page);
 * - `redirect`: the app is told on its redirect URI (`error`, `error_description`, `state`).
 */
export type AuthorizationProblem =
  | { kind: 'page'; message: string }
  | { kind: 'redirect'; redirectUri: string; state: string | null; error: string; description: string };

const single = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export async function checkAuthorization(db: Knex, params: AuthorizationParams): Promise<AuthorizationRequest | AuthorizationProblem> {
  const clientId = single(params.client_id);
  const app = clientId && clientId.length <= 100 ? await findApp(db, clientId) : undefined;
  if (!app) return { kind: 'page', message: 'This app is not known (client_id). Go back to the app and try again.' };
  const asked = single(params.redirect_uri);
  // Without redirect_uri only an app with a single registered one can be sent back (RFC 6749 3.1.2.3).
  const redirectUri = asked ?? (app.redirect_uris.length === 1 ? app.redirect_uris[0] : null);
  if (!redirectUri || !app.redirect_uris.includes(redirectUri)) {
    return { kind: 'page', message: 'The redirect_uri is not one this app registered. Go back to the app and try again.' };
  }
  const state = single(params.state);
  const refuse = (error: string, description: string): AuthorizationProblem => ({ kind: 'redirect', redirectUri, state, error, description });

  if (single(params.response_type) !== 'code') return refuse('unsupported_response_type', 'response_type must be code');
  const asking = (single(params.scope) ?? '').split(' ').filter(Boolean);
  const beyond = asking.filter((scope) => !app.scopes.includes(scope as Scope));
  if (beyond.length) return refuse('invalid_scope', `not a scope this app may ask for: ${beyond.join(' ')}`);
  const scopes = asking.length ? ALL_SCOPES.filter((scope) => asking.includes(scope)) : app.scopes;

  const challenge = single(params.code_challenge);
  const method = single(params.code_challenge_method);
  if (challenge || method) {
    if (method !== 'S256') return refuse('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)');
    if (!challenge || !PKCE_VALUE.test(challenge)) return refuse('invalid_request', 'code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
  } else if (app.client_type === 'public') {
    return refuse('invalid_request', 'a public app must send code_challenge with code_challenge_method=S256 (PKCE)');
  }
  return { app, redirectUri, redirectUriSent: asked !== null, scopes, state, codeChallenge: challenge };
}

export const isProblem = (checked: AuthorizationRequest | AuthorizationProblem): checked is AuthorizationProblem => 'kind' in checked;

/**
 * Where the browser goes back to the app: the redirect URI with `params` added to its query, and `iss`,
 * this server's issuer identifier, on every answer, success or error (RFC 9207): an app that talks to
 * several servers can tell which one answered (mix-up attacks, RFC 9700 4.4).
 */
export function backToApp(issuer: string, redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries({ ...params, iss: issuer })) if (value !== null) url.searchParams.set(name, value);
  return url.toString();
}

/** A member allowed the app: a new connection and its single-use code (stored hashed, 60 s). */
export async function approve(
  deps: { db: Knex; now: () => number },
  request: AuthorizationRequest,
  approval: { orgId: string; memberId: string },
): Promise<string> {
  const code = newSecret(CODE_PREFIX);
  await deps.db.transaction(async (trx) => {
    const connection = await createConnection(trx, { orgId: approval.orgId, clientId: request.app.client_id, scopes: request.scopes, memberId: approval.memberId });
    await trx('oauth_codes').insert({
      code_hash: hashSecret(code),
      connection_id: connection.id,
      redirect_uri: request.redirectUri,
      redirect_uri_sent: request.redirectUriSent,
      code_challenge: request.codeChallenge,
      code_challenge_method: request.codeChallenge ? 'S256' : null,
      expires_at: new Date(deps.now() + CODE_LIFETIME_SECONDS * 1000),
    });
  });
  return code;
}
