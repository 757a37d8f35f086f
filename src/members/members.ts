// Organization members: the people who sign in to the console (created through the admin API).
import type { Knex } from 'knex';
import { errors } from '../errors.js';
import { newId } from '../lib/ids.js';
import { getOrganization } from '../db/organizations.js';
import { checkPassword, hashPassword } from './passwords.js';

export type MemberRole = 'owner' | 'admin';

export interface MemberRow {
  id: string;
  org_id: string;
  email: string;
  password_hash: string;
  role: MemberRole;
  created_at: Date;
}

export interface Member {
  id: string;
  email: string;
  role: MemberRole;
  created_at: string;
}

/** Emails compare without regard to case (and surrounding spaces): stored lower-cased. */
export const normalEmail = (email: string) => email.trim().toLowerCase();

export function presentMember(row: MemberRow): Member {
  return { id: row.id, email: row.email, role: row.role, created_at: row.created_at.toISOString() };
}

export async function createMember(
  db: Knex,
  orgId: string,
  input: { email: string; password: string; role?: MemberRole },
): Promise<Member> {
  await getOrganization(db, orgId);
  const email = normalEmail(input.email);
  if (await db<MemberRow>('members').where({ org_id: orgId, email }).first('id')) {
    throw errors.conflict('a member with this email already belongs to this organization');
  }
  const passwordHash = await hashPassword(input.password);
  const [row] = await db<MemberRow>('members')
    .insert({ id: newId('mem'), org_id: orgId, email, password_hash: passwordHash, role: input.role ?? 'admin' })
    .onConflict(['org_id', 'email'])
    .ignore()
    .returning('*');
  // Two requests for the same email at once: the unique index lets one in.
  if (!row) throw errors.conflict('a member with this email already belongs to this organization');
  return presentMember(row);
}

/**
 * The member `email` and `password` name, or undefined. An email may belong to several
 * organizations: the oldest membership whose password matches wins. An unknown email costs one
 * password check like a known one, so the time does not reveal which emails exist.
 */
export async function memberByPassword(db: Knex, email: string, password: string): Promise<MemberRow | undefined> {
  const rows = await db<MemberRow>('members').where({ email: normalEmail(email) }).orderBy('created_at', 'asc').limit(5);
  if (!rows.length) {
    await checkPassword(undefined, password);
    return undefined;
  }
  for (const row of rows) {
    if (await checkPassword(row.password_hash, password)) return row;
  }
  return undefined;
}
