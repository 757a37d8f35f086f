import type { Knex } from 'knex';

// A phone dialled into a call through the organization's Twilio account: one row per leg Twilio
// accepted (never one it refused), the single-use token its media stream presents (hashed), and the
// leg's state as Twilio's status callbacks report it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('phone_legs', (t) => {
    t.text('id').primary();
    t.text('call_id').notNullable().references('calls.id').onDelete('CASCADE');
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('side').notNullable();
    t.text('to_number').notNullable();
    t.text('twilio_call_sid').notNullable().unique();
    t.text('stream_token_hash').notNullable().unique().comment('sha-256 of the single-use media stream token');
    t.text('status').notNullable().defaultTo('dialing').comment('dialing, ringing, answered, completed');
    t.timestamp('stream_started_at', { useTz: true }).nullable().comment('the token was used: it opens no other stream');
    t.timestamp('ended_at', { useTz: true }).nullable();
    t.text('end_reason').nullable().comment("Twilio's final status, or replaced / call_ended");
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['call_id', 'side']);
  });
  await knex.raw("ALTER TABLE phone_legs ADD CONSTRAINT phone_legs_side CHECK (side IN ('agent', 'customer'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('phone_legs');
}
