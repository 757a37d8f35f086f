import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sessions', (t) => {
    t.text('id').primary();
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('mode').notNullable().checkIn(['live', 'test']);
    t.text('status').notNullable().checkIn(['open', 'closed']);
    t.text('agent_language').notNullable();
    t.text('agent_name').notNullable();
    t.text('customer_language').nullable();
    t.text('customer_name').nullable();
    t.timestamp('customer_last_seen_at', { useTz: true }).nullable();
    t.text('customer_key_hash').notNullable().comment('sha256 of the key in customer_url; the link itself is not kept');
    t.text('external_id').nullable();
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.integer('retention_days').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('closed_at', { useTz: true }).nullable();
    t.index(['org_id', 'mode', 'created_at']);
    t.index(['org_id', 'mode', 'external_id']);
  });
  await knex.schema.createTable('messages', (t) => {
    t.bigIncrements('id');
    t.text('session_id').notNullable().references('sessions.id').onDelete('CASCADE');
    t.text('sender').notNullable().checkIn(['agent', 'customer']);
    t.text('author_name').notNullable();
    t.text('kind').notNullable().checkIn(['text', 'voice']);
    t.text('text').notNullable();
    t.text('language').nullable();
    t.text('agent_text').notNullable();
    t.text('customer_text').notNullable();
    t.jsonb('translations').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['session_id', 'id']);
    t.index(['created_at']);
  });
  await knex.schema.createTable('voice_recordings', (t) => {
    t.bigInteger('message_id').primary().references('messages.id').onDelete('CASCADE');
    t.text('mime_type').notNullable();
    t.double('duration_seconds').notNullable();
    t.binary('data').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('voice_recordings');
  await knex.schema.dropTable('messages');
  await knex.schema.dropTable('sessions');
}
