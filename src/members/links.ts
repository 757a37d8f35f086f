// One-time links of the console: an invitation (the invited person chooses their password and becomes
// a member) and a password reset (valid one hour). No mail server is assumed: whoever made the link
// hands it on. Only the token's hash is stored; a link opens once.
import type { Knex } from 'knex';
import { errors } from '../errors.js';
import { hashSecret, newId, newSecret } from '../lib/ids.js';
import { createMember, getMember, isMemberEmail, normalEmail, setPassword, type MemberDeps, type MemberRole } from './members.js';
import { getOrganization } from '../db/organizations.js';

export const PASSWORD_RESET_TTL_MS = 60 * 60_000;
/** An invitation waits longer than a reset: the invited person may read it days later. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60_000;

const TOKEN_PREFIX = 'cml_';
/** Where a link opens, under PUBLIC_BASE_URL. */
export const LINK_PATH = '/console/link/';

export type LinkKind = 'invitation' | 'password_reset';

interface LinkRow {
  id: string;
  token_hash: string;
  org_id: string;
  kind: LinkKind;
  member_id: string | null;
  email: string;
  role: MemberRole | null;
  created_by: string | null;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export interface MadeLink {
  url: string;
  expires_at: string;
}

/** What an open link is for, as its page says it. */
export interface OpenLink {
  kind: LinkKind;
  email: string;
  orgName: string;
  role: MemberRole | null;
}

async function makeLink(
  db: Knex,
  baseUrl: string,
  row: Omit<LinkRow, 'id' | 'token_hash' | 'created_at' | 'expires_at' | 'used_at'>,
  nowMs: number,
  ttlMs: number,
): Promise<MadeLink> {
  const token = newSecret(TOKEN_PREFIX);
  const expiresAt = new Date(nowMs + ttlMs);
  await db('member_links').insert({ ...row, id: newId('mlk'), token_hash: hashSecret(token), created_at: new Date(nowMs), expires_at: expiresAt });
  return { url: `${baseUrl}${LINK_PATH}${token}`, expires_at: expiresAt.toISOString() };
}

/** An invitation for `email` to join with `role` (409 when the email is already a member). */
export async function createInvitation(
  db: Knex,
  baseUrl: string,
  orgId: string,
  input: { email: string; role: MemberRole; createdBy: string | null },
  nowMs: number,
): Promise<MadeLink> {
  await getOrganization(db, orgId);
  if (await isMemberEmail(db, orgId, input.email)) throw errors.conflict('a member with this email already belongs to this organization');
  const row = { org_id: orgId, kind: 'invitation' as const, member_id: null, email: normalEmail(input.email), role: input.role, created_by: input.createdBy };
  return makeLink(db, baseUrl, row, nowMs, INVITATION_TTL_MS);
}

/** A link that lets member `memberId` choose a new password, for one hour (404 for an unknown member). */
export async function createPasswordReset(
  db: Knex,
  baseUrl: string,
  orgId: string,
  memberId: string,
  createdBy: string | null,
  nowMs: number,
): Promise<MadeLink> {
  const member = await getMember(db, orgId, memberId);
  const row = { org_id: orgId, kind: 'password_reset' as const, member_id: member.id, email: member.email, role: null, created_by: createdBy };
  return makeLink(db, baseUrl, row, nowMs, PASSWORD_RESET_TTL_MS);
}

const linkQuery = (db: Knex, token: string, nowMs: number) =>
  db<LinkRow>('member_links').where({ token_hash: hashSecret(token) }).whereNull('used_at').where('expires_at', '>', new Date(nowMs));

/** What the link `token` is for; 410 when it is unknown, used or expired. */
export async function openLink(db: Knex, token: string, nowMs: number): Promise<OpenLink> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 100) throw errors.linkUsed();
  const row = await linkQuery(db, token, nowMs).first();
  if (!row) throw errors.linkUsed();
  const org = await getOrganization(db, row.org_id);
  return { kind: row.kind, email: row.email, orgName: org.name, role: row.role };
}

/**
 * Uses the link once: an invitation adds the member with `password`, a reset sets it (and ends that
 * member's console sessions). Two uses at once: one wins, the other gets 410. Returns the email.
 */
export async function useLink(deps: MemberDeps, token: string, password: string, nowMs: number): Promise<string> {
  await openLink(deps.db, token, nowMs);
  const [row] = await linkQuery(deps.db, token, nowMs).update({ used_at: new Date(nowMs) }).returning('*');
  if (!row) throw errors.linkUsed();
  if (row.kind === 'invitation') await createMember(deps, row.org_id, { email: row.email, password, role: row.role ?? 'viewer' });
  else await setPassword(deps, row.member_id!, password);
  return row.email;
}

/** Forgets links that can no longer open anything. */
export async function purgeStaleLinks(db: Knex, nowMs: number): Promise<number> {
  return db('member_links').where('expires_at', '<=', new Date(nowMs)).orWhereNotNull('used_at').delete();
}
