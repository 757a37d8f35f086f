// Console sessions of members: a random token in an HttpOnly cookie (only its hash stored), a CSRF
// token per session, a fixed lifetime (CONSOLE_SESSION_TTL_SECONDS).
import type { Knex } from 'knex';
import type { CredentialState, RevocationBus } from '../auth/revocation.js';
import { hashSecret, newId, newSecret, randomBase62 } from '../lib/ids.js';
import type { MemberRole } from './roles.js';

interface MemberSessionRow {
  id: string;
  token_hash: string;
  member_id: string;
  csrf_secret: string;
  created_at: Date;
  expires_at: Date;
  last_seen_at: Date;
}

export interface MemberSession {
  sessionId: string;
  csrfToken: string;
  expiresAt: Date;
  member: { id: string; orgId: string; orgName: string; email: string; role: MemberRole; twoFactor: boolean; orgRequiresTwoFactor: boolean };
}

/** last_seen_at is written at most this often per session (not on every page). */
const LAST_SEEN_EVERY_MS = 60_000;

const TOKEN_PREFIX = 'cst_';

/** Starts a session for `memberId`; the token goes to the cookie and nowhere else. */
export async function startMemberSession(
  db: Knex,
  memberId: string,
  nowMs: number,
  ttlMs: number,
): Promise<{ token: string; sessionId: string; expiresAt: Date }> {
  const token = newSecret(TOKEN_PREFIX);
  const id = newId('mses');
  const now = new Date(nowMs);
  const expiresAt = new Date(nowMs + ttlMs);
  await db<MemberSessionRow>('member_sessions').insert({
    id,
    token_hash: hashSecret(token),
    member_id: memberId,
    csrf_secret: randomBase62(40),
    created_at: now,
    expires_at: expiresAt,
    last_seen_at: now,
  });
  return { token, sessionId: id, expiresAt };
}

/** The session `token` opens at `nowMs`, with its member and organization; undefined when unknown or expired. */
export async function findMemberSession(db: Knex, token: string, nowMs: number): Promise<MemberSession | undefined> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 100) return undefined;
  const row = await db('member_sessions as s')
    .join('members as m', 'm.id', 's.member_id')
    .join('organizations as o', 'o.id', 'm.org_id')
    .where('s.token_hash', hashSecret(token))
    .whereNull('m.disabled_at')
    .first(
      's.id',
      's.csrf_secret',
      's.expires_at',
      's.last_seen_at',
      'm.id as member_id',
      'm.org_id',
      'm.email',
      'm.role',
      'm.totp_enabled_at',
      'o.name as org_name',
      'o.require_two_factor',
    );
  if (!row) return undefined;
  const expiresAt = new Date(row.expires_at);
  if (expiresAt.getTime() <= nowMs) {
    // Expired: gone for good (a later clean-up would remove it anyway).
    await db('member_sessions').where({ id: row.id }).delete();
    return undefined;
  }
  if (nowMs - new Date(row.last_seen_at).getTime() >= LAST_SEEN_EVERY_MS) {
    await db('member_sessions').where({ id: row.id }).update({ last_seen_at: new Date(nowMs) });
  }
  return {
    sessionId: row.id,
    csrfToken: row.csrf_secret,
    expiresAt,
    member: {
      id: row.member_id,
      orgId: row.org_id,
      orgName: row.org_name,
      email: row.email,
      role: row.role,
      twoFactor: row.totp_enabled_at !== null,
      orgRequiresTwoFactor: Boolean(row.require_two_factor),
    },
  };
}

/** Whether the session still opens the console at `nowMs` (it may have ended since), and until when. */
export async function memberSessionState(db: Knex, sessionId: string, nowMs: number): Promise<CredentialState> {
  const row = await db('member_sessions').where({ id: sessionId }).where('expires_at', '>', new Date(nowMs)).first('expires_at');
  return row ? { active: true, expiresAt: new Date(row.expires_at).getTime() } : { active: false };
}

/** Ends a session; what it holds open (the console's live view) ends on every instance. */
export async function endMemberSession(deps: { db: Knex; revocations: RevocationBus }, sessionId: string): Promise<void> {
  await deps.db('member_sessions').where({ id: sessionId }).delete();
  await deps.revocations.announce(sessionId);
}

/** Ends every console session of a member (but `except`), on every instance. */
export async function endMemberSessions(deps: { db: Knex; revocations: RevocationBus }, memberId: string, except?: string): Promise<void> {
  const ended = await deps
    .db('member_sessions')
    .where({ member_id: memberId })
    .modify((q) => {
      if (except) q.whereNot({ id: except });
    })
    .delete()
    .returning('id');
  for (const { id } of ended as Array<{ id: string }>) await deps.revocations.announce(id);
}

/** Deletes sessions that expired before `nowMs` (an expired session already opens nothing). */
export async function purgeExpiredMemberSessions(db: Knex, nowMs: number): Promise<number> {
  return db('member_sessions').where('expires_at', '<=', new Date(nowMs)).delete();
}

/**
 * Leaves `sealed` for the session's next page: a form answers with a redirect (post/redirect/get), and
 * what it made (a secret shown once) waits here, sealed, until that page takes it.
 */
export async function leaveForNextPage(db: Knex, sessionId: string, sealed: string): Promise<void> {
  await db('console_flashes').insert({ session_id: sessionId, sealed });
}

/** What forms left for the session's next page, oldest first; taken once (a reload shows nothing again). */
export async function takeLeftForPage(db: Knex, sessionId: string): Promise<string[]> {
  const rows: Array<{ id: number | string; sealed: string }> = await db('console_flashes').where({ session_id: sessionId }).delete().returning(['id', 'sealed']);
  return rows.sort((a, b) => Number(a.id) - Number(b.id)).map((row) => row.sealed);
}
