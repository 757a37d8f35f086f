// Organization members: the people who sign in to the console, their roles (owner, admin, viewer),
// disabling and removing them. An organization always keeps an active owner.
import type { Knex } from 'knex';
import type { RevocationBus } from '../auth/revocation.js';
import { errors } from '../errors.js';
import { newId } from '../lib/ids.js';
import { getOrganization } from '../db/organizations.js';
import type { Passwords } from './passwords.js';
import type { MemberRole } from './roles.js';
import { endMemberSessions } from './sessions.js';

export { MEMBER_ROLES, type MemberRole } from './roles.js';

export interface MemberRow {
  id: string;
  org_id: string;
  email: string;
  password_hash: string;
  role: MemberRole;
  created_at: Date;
  disabled_at: Date | null;
}

export interface Member {
  id: string;
  email: string;
  role: MemberRole;
  created_at: string;
  disabled_at: string | null;
}

/** What a member change needs: the database, the bus that ends their open live views, and how passwords are hashed. */
export type MemberDeps = { db: Knex; revocations: RevocationBus; passwords: Passwords };
/** What making or checking a password needs. */
type PasswordDeps = Pick<MemberDeps, 'db' | 'passwords'>;

/** Emails compare without regard to case (and surrounding spaces): stored lower-cased. */
export const normalEmail = (email: string) => email.trim().toLowerCase();

export function presentMember(row: MemberRow): Member {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    created_at: row.created_at.toISOString(),
    disabled_at: row.disabled_at ? new Date(row.disabled_at).toISOString() : null,
  };
}

const MEMBER_EXISTS = 'a member with this email already belongs to this organization';

/** Adds a member with a password (the admin API, an accepted invitation); 409 when the email is taken. */
export async function createMember(
  { db, passwords }: PasswordDeps,
  orgId: string,
  input: { email: string; password: string; role?: MemberRole },
): Promise<Member> {
  await getOrganization(db, orgId);
  const email = normalEmail(input.email);
  if (await db<MemberRow>('members').where({ org_id: orgId, email }).first('id')) throw errors.conflict(MEMBER_EXISTS);
  const passwordHash = await passwords.hash(input.password);
  const [row] = await db<MemberRow>('members')
    .insert({ id: newId('mem'), org_id: orgId, email, password_hash: passwordHash, role: input.role ?? 'admin' })
    .onConflict(['org_id', 'email'])
    .ignore()
    .returning('*');
  // Two requests for the same email at once: the unique index lets one in.
  if (!row) throw errors.conflict(MEMBER_EXISTS);
  return presentMember(row);
}

/** Whether `email` already belongs to the organization. */
export async function isMemberEmail(db: Knex, orgId: string, email: string): Promise<boolean> {
  return (await db('members').where({ org_id: orgId, email: normalEmail(email) }).first('id')) !== undefined;
}

/** The organization's members, oldest first (404 for an unknown organization). */
export async function listMembers(db: Knex, orgId: string): Promise<Member[]> {
  await getOrganization(db, orgId);
  const rows = await db<MemberRow>('members').where({ org_id: orgId }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(presentMember);
}

/** The member `memberId` of `orgId`; 404 when either is unknown. */
export async function getMember(db: Knex, orgId: string, memberId: string): Promise<MemberRow> {
  const row = await db<MemberRow>('members').where({ id: memberId, org_id: orgId }).first();
  if (!row) {
    await getOrganization(db, orgId);
    throw errors.notFound('member');
  }
  return row;
}

/**
 * Refuses a change that would leave the organization without an active owner. The active owners' rows
 * are locked first, so two changes at once (each demoting a different owner) cannot both pass.
 */
async function keepAnOwner(trx: Knex.Transaction, orgId: string, leaving: string): Promise<void> {
  const owners = await trx('members').where({ org_id: orgId, role: 'owner' }).whereNull('disabled_at').forUpdate().select('id');
  if (owners.some((o) => o.id === leaving) && owners.length <= 1) throw errors.lastOwner();
}

/**
 * Changes a member's role or disables (enables) them. Demoting or disabling the last active owner is
 * refused (409); disabling ends every console session of the member at once.
 */
export async function updateMember(
  deps: MemberDeps,
  orgId: string,
  memberId: string,
  change: { role?: MemberRole; disabled?: boolean },
  nowMs: number,
): Promise<Member> {
  const { db } = deps;
  const row = await db.transaction(async (trx) => {
    const current = await getMember(trx, orgId, memberId);
    const demoted = change.role !== undefined && change.role !== 'owner';
    const disabling = change.disabled === true && !current.disabled_at;
    if (current.role === 'owner' && !current.disabled_at && (demoted || disabling)) await keepAnOwner(trx, orgId, memberId);
    const update: Partial<MemberRow> = {};
    if (change.role !== undefined) update.role = change.role;
    if (change.disabled !== undefined) update.disabled_at = change.disabled ? (current.disabled_at ?? new Date(nowMs)) : null;
    if (!Object.keys(update).length) return current;
    const [updated] = await trx<MemberRow>('members').where({ id: memberId }).update(update).returning('*');
    return updated!;
  });
  if (row.disabled_at) await endMemberSessions(deps, memberId);
  return presentMember(row);
}

/** Removes a member (204); the last active owner cannot be removed (409). Their sessions end at once. */
export async function removeMember(deps: MemberDeps, orgId: string, memberId: string): Promise<void> {
  const { db } = deps;
  const sessions = await db.transaction(async (trx) => {
    const current = await getMember(trx, orgId, memberId);
    if (current.role === 'owner' && !current.disabled_at) await keepAnOwner(trx, orgId, memberId);
    const ids: string[] = (await trx('member_sessions').where({ member_id: memberId }).select('id')).map((s) => s.id);
    await trx('members').where({ id: memberId }).delete();
    return ids;
  });
  for (const id of sessions) await deps.revocations.announce(id);
}

/** Sets a new password; every console session of the member ends (`except` the one that changed it). */
export async function setPassword(deps: MemberDeps, memberId: string, password: string, except?: string): Promise<void> {
  await deps.db('members').where({ id: memberId }).update({ password_hash: await deps.passwords.hash(password) });
  await endMemberSessions(deps, memberId, except);
}

/** Checks `password` against the member's own (a password change asks for the current one). */
export async function isMembersPassword({ db, passwords }: PasswordDeps, memberId: string, password: string): Promise<boolean> {
  const row = await db<MemberRow>('members').where({ id: memberId }).first('password_hash');
  return passwords.check(row?.password_hash, password);
}

/** Memberships an email signs in to, oldest first; the same number of password checks is made for every email. */
const SIGN_IN_CHECKS = 5;

/**
 * The active member `email` and `password` name, or undefined. An email may belong to several
 * organizations: the oldest membership whose password matches wins. Every sign-in makes the same
 * SIGN_IN_CHECKS password checks at once (against decoys where the email has fewer memberships), so
 * the time tells neither whether the email exists nor in how many organizations.
 */
export async function memberByPassword(
  { db, passwords }: PasswordDeps,
  email: string,
  password: string,
): Promise<MemberRow | undefined> {
  const rows = await db<MemberRow>('members')
    .where({ email: normalEmail(email) })
    .whereNull('disabled_at')
    .orderBy('created_at', 'asc')
    .limit(SIGN_IN_CHECKS);
  const checks = await Promise.all(Array.from({ length: SIGN_IN_CHECKS }, (_, i) => passwords.check(rows[i]?.password_hash, password)));
  return rows.find((_, i) => checks[i]);
}
