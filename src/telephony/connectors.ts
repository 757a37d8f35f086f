// An organization's telephony connector: its Twilio account SID, auth token and caller number. The auth
// token is kept sealed (AES-256-GCM with the secrets key, src/secrets/key.ts), opened only to place or
// hang up a phone call or to check Twilio's signature, and never answered or logged.
import type { Knex } from 'knex';
import { openText, sealText } from '../secrets/sealing.js';
import { getOrganization } from '../organizations/organizations.js';

export interface TelephonyConnector {
  account_sid: string;
  auth_token: string;
  from_number: string;
}

interface ConnectorRow {
  org_id: string;
  account_sid: string;
  auth_token: string | null;
  auth_token_sealed: string | null;
  from_number: string;
}

export async function setTelephonyConnector(db: Knex, secretsKey: Buffer, orgId: string, connector: TelephonyConnector) {
  await getOrganization(db, orgId);
  // Only the documented fields: request bodies may carry unknown ones (ignored), and the organization
  // comes from the path alone, never from the body.
  const { account_sid, auth_token, from_number } = connector;
  await db('telephony_connectors')
    .insert({
      org_id: orgId,
      account_sid,
      auth_token: null,
      auth_token_sealed: sealText(auth_token, secretsKey),
      from_number,
      updated_at: db.fn.now(),
    })
    .onConflict('org_id')
    .merge();
  return { org_id: orgId, account_sid, from_number, configured: true };
}

/** The organization's connector with its auth token opened; undefined when it has none. */
export async function findTelephonyConnector(db: Knex, secretsKey: Buffer, orgId: string): Promise<TelephonyConnector | undefined> {
  const row = await db<ConnectorRow>('telephony_connectors').where({ org_id: orgId }).first();
  if (!row) return undefined;
  return {
    account_sid: row.account_sid,
    auth_token: row.auth_token_sealed ? openText(row.auth_token_sealed, secretsKey) : row.auth_token!,
    from_number: row.from_number,
  };
}

/**
 * Seals the auth tokens stored in plaintext before tokens were sealed (the data half of migration
 * 20261202000100, which cannot know the key); returns how many it sealed. Runs at start-up.
 */
export async function sealPlaintextTokens(db: Knex, secretsKey: Buffer): Promise<number> {
  const plain = await db<ConnectorRow>('telephony_connectors').whereNotNull('auth_token').select('org_id', 'auth_token');
  for (const row of plain) {
    await db('telephony_connectors')
      .where({ org_id: row.org_id, auth_token: row.auth_token })
      .update({ auth_token: null, auth_token_sealed: sealText(row.auth_token!, secretsKey) });
  }
  return plain.length;
}
