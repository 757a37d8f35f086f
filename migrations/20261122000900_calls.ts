import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('calls', (t) => {
    t.text('id').primary();
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('mode').notNullable().checkIn(['live', 'test']);
    t.text('status').notNullable().checkIn(['open', 'ended']);
    t.text('agent_language').notNullable();
    t.text('agent_name').notNullable();
    t.text('customer_language').nullable();
    t.text('customer_name').nullable();
    t.text('external_id').nullable();
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.boolean('video').notNullable();
    t.text('support_session_id').nullable();
    t.text('agent_key_hash').notNullable().comment('sha256 of the key in agent_url');
    t.text('customer_key_hash').notNullable().comment('sha256 of the key in customer_url');
    t.timestamp('agent_joined_at', { useTz: true }).nullable().comment('set while the side is in the call');
    t.timestamp('customer_joined_at', { useTz: true }).nullable();
    t.uuid('agent_line_id').nullable().unique().comment('AudioSocket line playing the side');
    t.uuid('customer_line_id').nullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('ended_at', { useTz: true }).nullable();
    t.index(['org_id', 'mode', 'created_at']);
    t.index(['org_id', 'mode', 'external_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('calls');
}
