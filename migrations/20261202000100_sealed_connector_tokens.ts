import type { Knex } from 'knex';

// Telephony auth tokens are kept sealed (AES-256-GCM, src/secrets/sealing.ts). The key is not the database's
// to know, so this migration only makes room: the server seals every plaintext token left in
// `auth_token` at start-up (sealPlaintextTokens in src/telephony/connectors.ts) and clears it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('telephony_connectors', (t) => {
    t.text('auth_token_sealed').nullable().comment('the auth token, sealed with SECRETS_KEY');
    t.setNullable('auth_token');
  });
  await knex.raw(
    'ALTER TABLE telephony_connectors ADD CONSTRAINT telephony_connectors_one_token CHECK ((auth_token IS NULL) <> (auth_token_sealed IS NULL))',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE telephony_connectors DROP CONSTRAINT telephony_connectors_one_token');
  await knex.schema.alterTable('telephony_connectors', (t) => {
    t.dropColumn('auth_token_sealed');
  });
}
