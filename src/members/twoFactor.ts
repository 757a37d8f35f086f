// Two-factor sign-in with TOTP (RFC 6238: authenticator apps, 6 digits every 30 s), as the Stripe and
// Twilio consoles offer it: a member enrolls by scanning the secret and typing a code, gets ten recovery
// codes shown once, and from then on a sign-in asks for a code after the password. A code opens once (the
// step it was made for is remembered); a recovery code opens once. An owner may require it for everyone.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import * as OTPAuth from 'otpauth';
import { errors } from '../errors.js';
import { hashSecret, newId, newSecret } from '../lib/ids.js';
import { openText, sealText } from '../secrets/sealing.js';

type Deps = { db: Knex; secretsKey: Buffer };

const PERIOD_S = 30;
const RECOVERY_CODES = 10;
/** A sign-in waits this long for its second factor. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
const CHALLENGE_PREFIX = 'c2f_';

const totpOf = (secret: string, label = '') =>
  new OTPAuth.TOTP({ issuer: 'Live Interpretation console', label, algorithm: 'SHA1', digits: 6, period: PERIOD_S, secret: OTPAuth.Secret.fromBase32(secret) });

/** What an authenticator app needs: the secret (to type) and the otpauth:// URI (to scan). */
export interface Enrollment {
  secret: string;
  uri: string;
}

interface TwoFactorRow {
  id: string;
  email: string;
  totp_secret_sealed: string | null;
  totp_enabled_at: Date | null;
  totp_last_step: string | number | null;
}

const rowOf = (db: Knex, memberId: string) =>
  db<TwoFactorRow>('members').where({ id: memberId }).first('email', 'totp_secret_sealed', 'totp_enabled_at', 'totp_last_step');

/** Starts (or starts again) an enrollment: a new secret, in force only once a code from it is confirmed. */
export async function startEnrollment(deps: Deps, memberId: string): Promise<void> {
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  const updated = await deps.db('members').where({ id: memberId }).whereNull('totp_enabled_at').update({ totp_secret_sealed: sealText(secret, deps.secretsKey) });
  if (!updated) throw errors.conflict('two-factor sign-in is already on; turn it off first to set up another app');
}

/** The enrollment waiting for its first code, if any. */
export async function pendingEnrollment(deps: Deps, memberId: string): Promise<Enrollment | undefined> {
  const row = await rowOf(deps.db, memberId);
  if (!row?.totp_secret_sealed || row.totp_enabled_at) return undefined;
  const secret = openText(row.totp_secret_sealed, deps.secretsKey);
  return { secret, uri: totpOf(secret, row.email).toString() };
}

/** The time step a code opens at `nowMs` (null: none within one step either side). */
function stepOf(secret: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpOf(secret).validate({ token: code, timestamp: nowMs, window: 1 });
  return delta === null ? null : Math.floor(nowMs / 1000 / PERIOD_S) + delta;
}

/** Confirms the enrollment with a code from the app: two-factor sign-in is on; the recovery codes, shown once. */
export async function confirmEnrollment(deps: Deps, memberId: string, code: string, nowMs: number): Promise<string[]> {
  const row = await rowOf(deps.db, memberId);
  if (!row?.totp_secret_sealed || row.totp_enabled_at) throw errors.conflict('there is no two-factor setup waiting; start it again');
  const step = stepOf(openText(row.totp_secret_sealed, deps.secretsKey), code.trim(), nowMs);
  if (step === null) throw errors.invalid([{ loc: ['body', 'code'], msg: 'that code is not the one the app shows now', type: 'totp_code' }]);
  const codes = Array.from({ length: RECOVERY_CODES }, () => randomBytes(5).toString('hex').replace(/^(.{5})/, '$1-'));
  await deps.db.transaction(async (trx) => {
    await trx('members').where({ id: memberId }).update({ totp_enabled_at: new Date(nowMs), totp_last_step: step });
    await trx('member_recovery_codes').where({ member_id: memberId }).delete();
    await trx('member_recovery_codes').insert(codes.map((c) => ({ member_id: memberId, code_hash: hashSecret(c) })));
  });
  return codes;
}

/** Turns two-factor sign-in off (refused while the organization requires it). */
export async function disableTwoFactor(db: Knex, memberId: string): Promise<void> {
  const row = await db('members as m').join('organizations as o', 'o.id', 'm.org_id').where('m.id', memberId).first('o.require_two_factor');
  if (row?.require_two_factor) throw errors.conflict('the organization requires two-factor sign-in; it cannot be turned off');
  await db.transaction(async (trx) => {
    await trx('members').where({ id: memberId }).update({ totp_secret_sealed: null, totp_enabled_at: null, totp_last_step: null });
    await trx('member_recovery_codes').where({ member_id: memberId }).delete();
  });
}

/** Whether the member has two-factor sign-in on. */
export async function hasTwoFactor(db: Knex, memberId: string): Promise<boolean> {
  return Boolean((await db('members').where({ id: memberId }).first('totp_enabled_at'))?.totp_enabled_at);
}

/**
 * Checks a second factor: a 6-digit code from the app (each opens once), or one of the recovery codes
 * (each opens once). Returns whether it opened.
 */
export async function checkSecondFactor(deps: Deps, memberId: string, code: string, nowMs: number): Promise<boolean> {
  const row = await rowOf(deps.db, memberId);
  if (!row?.totp_enabled_at || !row.totp_secret_sealed) return false;
  const typed = code.replace(/\s/g, '');
  const step = stepOf(openText(row.totp_secret_sealed, deps.secretsKey), typed, nowMs);
  if (step !== null) {
    // Only a step newer than the last one used: the same code twice (a replay) opens nothing.
    const used = await deps.db('members')
      .where({ id: memberId })
      .where((q) => q.whereNull('totp_last_step').orWhere('totp_last_step', '<', step))
      .update({ totp_last_step: step });
    return used === 1;
  }
  const recovery = typed.toLowerCase();
  if (!/^[0-9a-f]{5}-[0-9a-f]{5}$/.test(recovery)) return false;
  const spent = await deps.db('member_recovery_codes')
    .where({ member_id: memberId, code_hash: hashSecret(recovery) })
    .whereNull('used_at')
    .update({ used_at: new Date(nowMs) });
  return spent === 1;
}

/** Recovery codes not used yet. */
export async function recoveryCodesLeft(db: Knex, memberId: string): Promise<number> {
  const row = await db('member_recovery_codes').where({ member_id: memberId }).whereNull('used_at').count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** A sign-in whose password was right, waiting for its second factor: the token goes to a cookie. */
export async function startChallenge(db: Knex, memberId: string, returnTo: string, nowMs: number): Promise<string> {
  const token = newSecret(CHALLENGE_PREFIX);
  await db('member_sign_in_challenges').insert({
    id: newId('m2f'),
    token_hash: hashSecret(token),
    member_id: memberId,
    return_to: returnTo,
    expires_at: new Date(nowMs + CHALLENGE_TTL_MS),
  });
  return token;
}

/** The sign-in `token` continues, if it has not expired: the member and where they were going. */
export async function findChallenge(db: Knex, token: string, nowMs: number): Promise<{ id: string; memberId: string; email: string; returnTo: string } | undefined> {
  if (!token.startsWith(CHALLENGE_PREFIX) || token.length > 100) return undefined;
  const row = await db('member_sign_in_challenges as c')
    .join('members as m', 'm.id', 'c.member_id')
    .where('c.token_hash', hashSecret(token))
    .where('c.expires_at', '>', new Date(nowMs))
    .whereNull('m.disabled_at')
    .first('c.id', 'c.member_id', 'c.return_to', 'm.email');
  return row && { id: row.id, memberId: row.member_id, email: row.email, returnTo: row.return_to };
}

export async function endChallenge(db: Knex, id: string): Promise<void> {
  await db('member_sign_in_challenges').where({ id }).delete();
}

/** Forgets sign-ins that waited too long for their second factor (housekeeping); returns how many. */
export async function purgeExpiredChallenges(db: Knex, nowMs: number): Promise<number> {
  return db('member_sign_in_challenges').where('expires_at', '<=', new Date(nowMs)).delete();
}

/** An owner's rule: every member must use two-factor sign-in (until they set it up, only their account page opens). */
export async function setRequireTwoFactor(db: Knex, orgId: string, required: boolean): Promise<void> {
  await db('organizations').where({ id: orgId }).update({ require_two_factor: required });
}
