// How an app proves who it is at the token and revocation endpoints (RFC 6749 2.3): a confidential app
// with its secret, by HTTP Basic or in the form; a public app by its client_id alone (it has no secret,
// and PKCE binds its codes instead).
import type { Knex } from 'knex';
import { errors } from '../errors.js';
import { findApp, secretMatches, type AppRow } from './apps.js';

/** The form fields of both endpoints, as the contract validated them. */
export type Form = Record<string, string | null | undefined>;

/** A field of the form; an empty one counts as absent, as RFC 6749 3.1 asks. */
export const formField = (form: Form, name: string): string | null => {
  const value = form[name];
  return typeof value === 'string' && value !== '' ? value : null;
};

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

/** A public app presents no secret; a confidential one its own. */
const presentsItself = (app: AppRow, secret: string | null) => (app.client_type === 'public' ? secret === null : secret !== null && secretMatches(app, secret));

/**
 * The app the request authenticates as. A failed attempt through the Authorization header is 401 with
 * a Basic challenge, one through the form 400 (RFC 6749 5.2); both `invalid_client`, saying no more.
 */
export async function authenticateClient(db: Knex, authorization: string | null, form: Form): Promise<AppRow> {
  if (authorization) {
    const credentials = basicCredentials(authorization);
    const app = credentials && (await findApp(db, credentials.id));
    if (app && presentsItself(app, credentials.secret || null)) return app;
    throw errors.oauth(401, 'invalid_client', 'client authentication failed', { 'WWW-Authenticate': 'Basic realm="oauth2"' });
  }
  const clientId = formField(form, 'client_id');
  const app = clientId ? await findApp(db, clientId) : undefined;
  if (app && presentsItself(app, formField(form, 'client_secret'))) return app;
  throw errors.oauth(400, 'invalid_client', 'client authentication failed');
}
