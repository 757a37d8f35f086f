// Who is signed in to the console: the session cookie, the sign-in URL to send others to, and the
// CSRF check of console forms. Other console pages (and the OAuth consent page) build on these.
import { timingSafeEqual } from 'node:crypto';
import type express from 'express';
import type { AppContext } from '../http/context.js';
import { errors } from '../errors.js';
import type { MemberRole } from '../members/members.js';
import { findMemberSession } from '../members/sessions.js';

export interface SignedInMember {
  id: string;
  orgId: string;
  orgName: string;
  email: string;
  role: MemberRole;
  /** Whether the member signs in with a second factor, and whether the organization requires one. */
  twoFactor: boolean;
  orgRequiresTwoFactor: boolean;
  sessionId: string;
  csrfToken: string;
}

/** Behind https the cookie is `__Host-` prefixed: browsers then insist on Secure, Path=/ and no Domain. */
export function sessionCookieName(app: AppContext): string {
  return isHttps(app) ? '__Host-console_session' : 'console_session';
}

export const isHttps = (app: AppContext) => app.config.publicBaseUrl.startsWith('https:');

/** The value of cookie `name` in the request's Cookie header, if any. */
export function readCookie(req: express.Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    const raw = part.slice(at + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The member whose session cookie the request carries; null when absent, unknown or expired. */
export async function signedInMember(app: AppContext, req: express.Request): Promise<SignedInMember | null> {
  const token = readCookie(req, sessionCookieName(app));
  if (!token) return null;
  const session = await findMemberSession(app.db, token, app.now());
  if (!session) return null;
  return { ...session.member, sessionId: session.sessionId, csrfToken: session.csrfToken };
}

const RANK: Record<MemberRole, number> = { viewer: 0, admin: 1, owner: 2 };

/** Whether the member's role allows what `needed` may do (owners everything, admins all but members, viewers reading). */
export const hasRole = (member: Pick<SignedInMember, 'role'>, needed: MemberRole) => RANK[member.role] >= RANK[needed];

/** Throws the catalogue's 403 unless the member's role allows what `needed` may do. */
export function requireRole(member: SignedInMember, needed: MemberRole): void {
  if (needed !== 'viewer' && !hasRole(member, needed)) throw errors.roleRequired(needed, member.role);
}

/** A path of this site (`/...` but not `//...` or `/\...`, no control characters); anything else is refused. */
export function isSameOriginPath(value: unknown): value is string {
  return typeof value === 'string' && /^\/(?![/\\])[^\s\\\x00-\x1f\x7f]*$/.test(value) && value.length <= 2000;
}

/** The sign-in page, returning to `returnTo` (a path of this site) once the member has signed in. */
export function signInUrl(returnTo: string): string {
  return `/console/sign-in?return_to=${encodeURIComponent(isSameOriginPath(returnTo) ? returnTo : '/console')}`;
}

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Whether a browser said the request comes from another site: an `Origin` header (browsers send it
 * with every form POST) whose host is not the one the request was sent to, or `null` (an opaque
 * origin). Hosts are compared, not schemes: TLS may end at a proxy the server is not told about.
 */
export function isForeignOrigin(req: express.Request): boolean {
  const origin = req.get('origin');
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.host;
  } catch {
    return true;
  }
}

/**
 * A console form's `csrf_token` field must be the member's session CSRF token; a browser's Origin,
 * when sent, must be this server's. Throws the catalogue's 403 otherwise.
 */
export function checkCsrf(member: SignedInMember, req: express.Request): void {
  if (isForeignOrigin(req)) throw errors.invalidCsrfToken();
  const body: unknown = req.body;
  const sent = body && typeof body === 'object' ? (body as Record<string, unknown>).csrf_token : undefined;
  if (typeof sent !== 'string' || !sameText(sent, member.csrfToken)) throw errors.invalidCsrfToken();
}
