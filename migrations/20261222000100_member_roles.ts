import type { Knex } from 'knex';

// Members: the `viewer` role, disabling a member, one-time links (invitations, password resets), and
// what a console form leaves for the page it redirects to (post/redirect/get: a secret shown once).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table members drop constraint if exists members_role_check');
  await knex.schema.alterTable('members', (t) => {
    t.check(`role in ('owner', 'admin', 'viewer')`, [], 'members_role_check');
    t.timestamp('disabled_at', { useTz: true }).nullable().comment('a disabled member cannot sign in; their sessions ended when it was set');
  });
  await knex.schema.createTable('member_links', (t) => {
    t.text('id').primary();
    t.text('token_hash').notNullable().unique().comment('sha256 of the link token; the token itself is never stored');
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('kind').notNullable().checkIn(['invitation', 'password_reset']);
    t.text('member_id').nullable().references('members.id').onDelete('CASCADE').comment('password_reset: whose password');
    t.text('email').notNullable().comment('invitation: who is invited; password_reset: the member email when made');
    t.text('role').nullable().checkIn(['owner', 'admin', 'viewer']).comment('invitation: the role the new member gets');
    t.text('created_by').nullable().comment('the member who made it; null for the admin API');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true }).nullable();
    t.index(['org_id', 'kind']);
  });
  await knex.schema.createTable('console_flashes', (t) => {
    t.bigIncrements('id');
    t.text('session_id').notNullable().references('member_sessions.id').onDelete('CASCADE');
    t.text('sealed').notNullable().comment('JSON sealed with SECRETS_KEY: it may hold a secret shown once');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['session_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('console_flashes');
  await knex.schema.dropTable('member_links');
  await knex('members').where({ role: 'viewer' }).update({ role: 'admin' });
  await knex.schema.alterTable('members', (t) => {
    t.dropColumn('disabled_at');
    t.dropChecks('members_role_check');
    t.check(`role in ('owner', 'admin')`, [], 'members_role_check');
  });
}
