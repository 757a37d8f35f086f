import type { Knex } from 'knex';
import type { PrincipalCache } from '../auth/principalCache.js';
import type { RevocationBus } from '../auth/revocation.js';
import { ALL_SCOPES, type ApiPrincipal, type Mode, type Scope } from '../auth/principal.js';
import { errors } from '../errors.js';
import { hashSecret, newId, newSecret } from '../ids.js';
import { getOrganization } from './organizations.js';

const KEY_PREFIX: Record<Mode, string> = { live: 'spk_live_', test: 'spk_test_' };

interface ApiKeyRow {
  id: string;
  org_id: string;
  mode: Mode;
  key_hash: string;
  scopes: Scope[];
  created_at: Date;
  revoked_at: Date | null;
}

export interface CreatedApiKey {
  id: string;
  key: string;
  mode: Mode;
  scopes: Scope[];
  created_at: string;
}

export async function createApiKey(db: Knex, orgId: string, mode: Mode, scopes?: Scope[]): Promise<CreatedApiKey> {
  await getOrganization(db, orgId);
  const key = newSecret(KEY_PREFIX[mode]);
  // Keep the canonical order and drop repeats, so the key's scopes read the same everywhere.
  const granted = ALL_SCOPES.filter((scope) => (scopes ?? ALL_SCOPES).includes(scope));
  const [row] = await db<ApiKeyRow>('api_keys')
    .insert({ id: newId('key'), org_id: orgId, mode, key_hash: hashSecret(key), scopes: granted })
    .returning('*');
  return { id: row.id, key, mode: row.mode, scopes: row.scopes, created_at: row.created_at.toISOString() };
}

export async function revokeApiKey(deps: { db: Knex; revocations: RevocationBus }, keyId: string): Promise<void> {
  const { db } = deps;
  const key = await db<ApiKeyRow>('api_keys').where({ id: keyId }).first();
  if (!key) throw errors.notFound('API key');
  if (!key.revoked_at) await db('api_keys').where({ id: keyId }).update({ revoked_at: db.fn.now() });
  // Committed: the streams still open with the key end now, not at their next request, and every
  // instance's credential cache forgets the key before the next request.
  await deps.revocations.announce(keyId);
}

/** Whether the key exists and is not revoked (streams re-check once they watch for revocation). */
export async function isApiKeyActive(db: Knex, keyId: string): Promise<boolean> {
  return (await db<ApiKeyRow>('api_keys').where({ id: keyId }).whereNull('revoked_at').first('id')) !== undefined;
}

/**
 * The principal behind a presented key. Looked up in the database unless the cache knows it; the cache
 * forgets a key when its revocation is announced, so a revocation still applies to the next request.
 */
export async function authenticateApiKey(deps: { db: Knex; principals: PrincipalCache }, presented: string): Promise<ApiPrincipal> {
  if (!/^spk_(live|test)_[0-9A-Za-z]{16,200}$/.test(presented)) throw errors.invalidApiKey();
  const keyHash = hashSecret(presented);
  const principal = await deps.principals.principalFor(keyHash, () => activePrincipal(deps.db, keyHash));
  if (!principal) throw errors.invalidApiKey();
  return principal;
}

async function activePrincipal(db: Knex, keyHash: string): Promise<ApiPrincipal | undefined> {
  const row = await db<ApiKeyRow>('api_keys').where({ key_hash: keyHash }).whereNull('revoked_at').first('id', 'org_id', 'mode', 'scopes');
  return (
    row && {
      kind: 'apiKey',
      keyId: row.id,
      orgId: row.org_id,
      mode: row.mode,
      scopes: row.scopes,
      rateLimitKey: `key:${row.id}`,
    }
  );
}
