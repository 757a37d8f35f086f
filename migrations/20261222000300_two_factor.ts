import type { Knex } from 'knex';

// Two-factor sign-in: a member's TOTP secret (sealed), the last time step used (a code opens once), one-
// time recovery codes (hashed), sign-ins waiting for their second factor, and the organization's rule.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('members', (t) => {
    t.text('totp_secret_sealed').nullable().comment('base32 TOTP secret sealed with SECRETS_KEY; set while enrolling, in force once totp_enabled_at is set');
    t.timestamp('totp_enabled_at', { useTz: true }).nullable();
    t.bigInteger('totp_last_step').nullable().comment('the newest 30 s step a code was accepted for: no code opens twice');
  });
  await knex.schema.createTable('member_recovery_codes', (t) => {
    t.bigIncrements('id');
    t.text('member_id').notNullable().references('members.id').onDelete('CASCADE');
    t.text('code_hash').notNullable().comment('sha256 of the code; shown once, never stored');
    t.timestamp('used_at', { useTz: true }).nullable();
    t.index(['member_id']);
  });
  await knex.schema.createTable('member_sign_in_challenges', (t) => {
    t.text('id').primary();
    t.text('token_hash').notNullable().unique().comment('sha256 of the cookie token of a sign-in waiting for its second factor');
    t.text('member_id').notNullable().references('members.id').onDelete('CASCADE');
    t.text('return_to').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
  });
  await knex.schema.alterTable('organizations', (t) => {
    t.boolean('require_two_factor').notNullable().defaultTo(false).comment('members must set up two-factor sign-in before anything else in the console');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => t.dropColumn('require_two_factor'));
  await knex.schema.dropTable('member_sign_in_challenges');
  await knex.schema.dropTable('member_recovery_codes');
  await knex.schema.alterTable('members', (t) => {
    t.dropColumn('totp_last_step');
    t.dropColumn('totp_enabled_at');
    t.dropColumn('totp_secret_sealed');
  });
}
