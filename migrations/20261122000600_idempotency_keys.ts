import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.text('principal_key').notNullable().comment('the API key (or app) the Idempotency-Key belongs to');
    t.text('idempotency_key').notNullable();
    t.text('request_hash').notNullable().comment('method, path and body of the first request');
    t.text('state').notNullable().checkIn(['running', 'done']);
    t.integer('response_status').nullable();
    t.text('response_body').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['principal_key', 'idempotency_key']);
    t.index(['created_at']);
  });
  // A charge made under an Idempotency-Key carries it, so a retry after a crash cannot charge twice.
  await knex.schema.alterTable('ledger_entries', (t) => {
    t.text('request_ref').nullable().unique();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('ledger_entries', (t) => {
    t.dropColumn('request_ref');
  });
  await knex.schema.dropTable('idempotency_keys');
}
