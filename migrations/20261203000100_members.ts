import type { Knex } from 'knex';

// Organization members (people who sign in to the console), their console sessions, and when each
// API key was last used.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('members', (t) => {
    t.text('id').primary();
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('email').notNullable().comment('lower-cased; unique within the organization');
    t.text('password_hash').notNullable().comment('argon2id PHC string; the password itself is never stored');
    t.text('role').notNullable().checkIn(['owner', 'admin']);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['org_id', 'email']);
    t.index(['email']);
  });
  await knex.schema.createTable('member_sessions', (t) => {
    t.text('id').primary();
    t.text('token_hash').notNullable().unique().comment('sha256 of the cookie token; the token itself is never stored');
    t.text('member_id').notNullable().references('members.id').onDelete('CASCADE');
    t.text('csrf_secret').notNullable().comment('per-session CSRF token of the console forms');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['member_id']);
    t.index(['expires_at']);
  });
  await knex.schema.alterTable('api_keys', (t) => {
    t.timestamp('last_used_at', { useTz: true }).nullable().comment('at most a minute behind (updated at most once a minute per key and instance)');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => t.dropColumn('last_used_at'));
  await knex.schema.dropTable('member_sessions');
  await knex.schema.dropTable('members');
}
