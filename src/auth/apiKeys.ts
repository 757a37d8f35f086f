import type { Knex } from 'knex';
import type { PrincipalCache } from './principalCache.js';
import type { CredentialState, RevocationBus } from './revocation.js';
import { ALL_SCOPES, type KeyPrincipal, type Mode, type Scope } from './principal.js';
import { errors } from '../errors.js';
import { hashSecret, newId, newSecret } from '../lib/ids.js';
import { getOrganization } from '../db/organizations.js';

const KEY_PREFIX: Record<Mode, string> = { live: 'spk_live_', test: 'spk_test_' };

interface ApiKeyRow {
  id: string;
  org_id: string;
  mode: Mode;
  key_hash: string;
  scopes: Scope[];
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  name: string | null;
  last_four: string | null;
  created_by: string | null;
  expires_at: Date | null;
  replaced_by: string | null;
}

/** A key as the operator may see it: never the key itself nor its hash. */
export interface ApiKeyInfo {
  id: string;
  mode: Mode;
  scopes: Scope[];
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  name: string | null;
  last_four: string | null;
  created_by: string | null;
  expires_at: string | null;
}

export interface CreatedApiKey {
  id: string;
  key: string;
  mode: Mode;
  scopes: Scope[];
  created_at: string;
}

/** Who made a key and what for (the console's form); the admin API names neither. */
export interface KeyLabel {
  name?: string | null;
  createdBy?: string | null;
}

/** The longest name a key may have. */
export const KEY_NAME_MAX_LENGTH = 100;

export async function createApiKey(db: Knex, orgId: string, mode: Mode, scopes?: Scope[], label: KeyLabel = {}): Promise<CreatedApiKey> {
  await getOrganization(db, orgId);
  const key = newSecret(KEY_PREFIX[mode]);
  // Keep the canonical order and drop repeats, so the key's scopes read the same everywhere.
  const granted = ALL_SCOPES.filter((scope) => (scopes ?? ALL_SCOPES).includes(scope));
  const [row] = await db<ApiKeyRow>('api_keys')
    .insert({
      id: newId('key'),
      org_id: orgId,
      mode,
      key_hash: hashSecret(key),
      scopes: granted,
      name: label.name || null,
      last_four: key.slice(-4),
      created_by: label.createdBy ?? null,
    })
    .returning('*');
  return { id: row.id, key, mode: row.mode, scopes: row.scopes, created_at: row.created_at.toISOString() };
}

/** The overlaps a roll offers, as Stripe does: the old key stops now, or after one hour, a day or a week. */
export const ROLL_OVERLAPS_MS = [0, 3600_000, 24 * 3600_000, 7 * 24 * 3600_000] as const;

/**
 * Rolls key `keyId` of organization `orgId`: a new key with the same mode, scopes and name, and the old
 * one working `overlapMs` longer (none: revoked at once). A revoked, expired or already rolled key
 * cannot be rolled (409): roll its successor.
 */
export async function rollApiKey(
  deps: { db: Knex; revocations: RevocationBus },
  keyId: string,
  orgId: string,
  overlapMs: number,
  createdBy: string | null,
  nowMs: number,
): Promise<{ created: CreatedApiKey; oldKeyExpiresAt: string | null }> {
  const result = await deps.db.transaction(async (trx) => {
    const old = await trx<ApiKeyRow>('api_keys').where({ id: keyId, org_id: orgId }).forUpdate().first();
    if (!old) throw errors.notFound('API key');
    if (old.revoked_at || old.replaced_by || (old.expires_at && old.expires_at.getTime() <= nowMs)) {
      throw errors.conflict('this key is revoked, expired or already rolled; roll the key that replaced it');
    }
    const created = await createApiKey(trx, orgId, old.mode, old.scopes, { name: old.name, createdBy });
    const expiresAt = overlapMs > 0 ? new Date(nowMs + overlapMs) : null;
    await trx('api_keys')
      .where({ id: keyId })
      .update({ replaced_by: created.id, ...(expiresAt ? { expires_at: expiresAt } : { revoked_at: new Date(nowMs) }) });
    return { created, oldKeyExpiresAt: expiresAt?.toISOString() ?? null };
  });
  // Cached look-ups of the old key are forgotten: the next request reads its end (or its revocation).
  await deps.revocations.announce(keyId);
  return result;
}

/** Revokes a key (of organization `orgId` only, when given: a member revokes only their own organization's). */
export async function revokeApiKey(deps: { db: Knex; revocations: RevocationBus }, keyId: string, orgId?: string): Promise<void> {
  const { db } = deps;
  const key = await db<ApiKeyRow>('api_keys')
    .where(orgId === undefined ? { id: keyId } : { id: keyId, org_id: orgId })
    .first();
  if (!key) throw errors.notFound('API key');
  if (!key.revoked_at) await db('api_keys').where({ id: keyId }).update({ revoked_at: db.fn.now() });
  // Committed: the streams still open with the key end now, not at their next request, and every
  // instance's credential cache forgets the key before the next request.
  await deps.revocations.announce(keyId);
}

/**
 * Whether the key still works at `nowMs`, and until when: a stream opened with it checks once it watches
 * for announcements, and again at each one (a roll announces the old key's new end, a revocation its end).
 */
export async function apiKeyState(db: Knex, keyId: string, nowMs: number): Promise<CredentialState> {
  const row = await db<ApiKeyRow>('api_keys').where({ id: keyId }).whereNull('revoked_at').modify(notExpired(nowMs)).first('expires_at');
  return row ? { active: true, expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null } : { active: false };
}

/**
 * The principal behind a presented key. Looked up in the database unless the cache knows it; the cache
 * forgets a key when its revocation is announced, so a revocation still applies to the next request.
 */
export async function authenticateApiKey(deps: { db: Knex; principals: PrincipalCache; now: () => number }, presented: string): Promise<KeyPrincipal> {
  if (!/^spk_(live|test)_[0-9A-Za-z]{16,200}$/.test(presented)) throw errors.invalidApiKey();
  const keyHash = hashSecret(presented);
  const principal = await deps.principals.principalFor(keyHash, () => activePrincipal(deps.db, keyHash, deps.now()));
  if (!principal || principal.kind !== 'apiKey' || (principal.expiresAt !== null && principal.expiresAt <= deps.now())) throw errors.invalidApiKey();
  noteKeyUse(deps.db, principal.keyId);
  return principal;
}

/** `last_used_at` is written at most this often per key (and instance). */
export const KEY_USE_EVERY_MS = 60_000;

/** Per database: when this process last wrote each key's last_used_at. */
const keyUseWrites = new WeakMap<Knex, Map<string, number>>();

/**
 * Records that a key was used, at most once a minute per key: the request does not wait for the
 * write, and a failed write is only a stale `last_used_at`, never a failed request.
 */
export function noteKeyUse(db: Knex, keyId: string, nowMs = Date.now()): void {
  let written = keyUseWrites.get(db);
  if (!written) keyUseWrites.set(db, (written = new Map()));
  const last = written.get(keyId);
  if (last !== undefined && nowMs - last < KEY_USE_EVERY_MS) return;
  if (written.size >= 100_000) {
    // Keys not used for a minute need no memory: the next use writes anyway.
    for (const [id, at] of written) if (nowMs - at >= KEY_USE_EVERY_MS) written.delete(id);
  }
  written.set(keyId, nowMs);
  try {
    void db('api_keys')
      .where({ id: keyId })
      .update({ last_used_at: new Date(nowMs) })
      .then(
        () => undefined,
        () => undefined,
      );
  } catch {
    // Never the request's problem.
  }
}

/** Keys that have not reached the end a roll gave them. */
const notExpired = (nowMs: number) => (q: Knex.QueryBuilder) => q.where((w) => w.whereNull('expires_at').orWhere('expires_at', '>', new Date(nowMs)));

async function activePrincipal(db: Knex, keyHash: string, nowMs: number): Promise<KeyPrincipal | undefined> {
  const row = await db<ApiKeyRow>('api_keys')
    .where({ key_hash: keyHash })
    .whereNull('revoked_at')
    .modify(notExpired(nowMs))
    .first('id', 'org_id', 'mode', 'scopes', 'expires_at');
  return (
    row && {
      kind: 'apiKey',
      keyId: row.id,
      expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null,
      orgId: row.org_id,
      mode: row.mode,
      scopes: row.scopes,
      rateLimitKey: `key:${row.id}`,
    }
  );
}

/** Every key of the organization, revoked ones included, newest first. */
export async function listApiKeys(db: Knex, orgId: string): Promise<ApiKeyInfo[]> {
  await getOrganization(db, orgId);
  const rows = await db<ApiKeyRow>('api_keys')
    .where({ org_id: orgId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .select('id', 'mode', 'scopes', 'created_at', 'revoked_at', 'last_used_at', 'name', 'last_four', 'created_by', 'expires_at');
  return rows.map((row) => ({
    id: row.id,
    mode: row.mode,
    scopes: row.scopes,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    name: row.name,
    last_four: row.last_four,
    created_by: row.created_by,
    expires_at: row.expires_at?.toISOString() ?? null,
  }));
}
