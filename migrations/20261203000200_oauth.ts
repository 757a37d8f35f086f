import type { Knex } from 'knex';

// OAuth apps that many organizations install. An app is registered by the operator; an organization's
// member approves it, which makes a connection (organization x app, the scopes granted). The
// connection is what the app's tokens act as; revoking it stops every code and token of it at once.
// Codes and tokens are stored as hashes only.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oauth_apps', (t) => {
    t.text('client_id').primary();
    t.text('name').notNullable();
    t.text('client_type').notNullable().checkIn(['confidential', 'public']);
    t.text('secret_hash').nullable().comment('sha-256 of the client secret; null for a public app');
    t.specificType('redirect_uris', 'text[]').notNullable();
    t.specificType('scopes', 'text[]').notNullable().comment('the most the app may ask for');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true }).nullable();
  });
  await knex.schema.createTable('oauth_connections', (t) => {
    t.text('id').primary();
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('client_id').notNullable().references('oauth_apps.client_id').onDelete('CASCADE');
    t.specificType('scopes', 'text[]').notNullable();
    t.text('approved_by').nullable().comment('the member who allowed it');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('activated_at', { useTz: true }).nullable().comment('its code was exchanged for tokens');
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.text('revoked_reason').nullable();
    t.index(['org_id', 'client_id']);
    t.index(['client_id']);
  });
  await knex.schema.createTable('oauth_codes', (t) => {
    t.text('code_hash').primary();
    t.text('connection_id').notNullable().references('oauth_connections.id').onDelete('CASCADE');
    t.text('redirect_uri').notNullable();
    t.text('code_challenge').nullable();
    t.text('code_challenge_method').nullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true }).nullable();
    t.index(['expires_at']);
  });
  await knex.schema.createTable('oauth_tokens', (t) => {
    t.text('token_hash').primary();
    t.text('kind').notNullable().checkIn(['access', 'refresh']);
    t.text('connection_id').notNullable().references('oauth_connections.id').onDelete('CASCADE');
    t.specificType('scopes', 'text[]').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true }).nullable().comment('a refresh token that was rotated: presenting it again revokes the connection');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['connection_id']);
    t.index(['expires_at']);
  });
  // Events and ledger rows say which app acted (none for API keys and customers).
  await knex.schema.alterTable('events', (t) => t.text('app_id').nullable());
  await knex.schema.alterTable('ledger_entries', (t) => t.text('app_id').nullable());
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ledger_entries', (t) => t.dropColumn('app_id'));
  await knex.schema.alterTable('events', (t) => t.dropColumn('app_id'));
  await knex.schema.dropTable('oauth_tokens');
  await knex.schema.dropTable('oauth_codes');
  await knex.schema.dropTable('oauth_connections');
  await knex.schema.dropTable('oauth_apps');
}
