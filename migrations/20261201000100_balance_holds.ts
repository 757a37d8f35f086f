import type { Knex } from 'knex';

// Reservations: a billable request holds its known cost before the engine runs, so concurrent requests
// cannot spend the same money. A hold is not a ledger row (the balance stays the sum of the ledger);
// what requests may still spend is balance_micros - held_micros.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('instances', (t) => {
    t.text('id').primary();
    t.text('host').notNullable();
    t.integer('pid').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable().comment('renewed by its heartbeat; past it the instance is dead');
  });
  await knex.schema.alterTable('organizations', (t) => {
    t.bigInteger('held_micros').notNullable().defaultTo(0).comment('sum of balance_holds: reserved, not yet charged');
  });
  await knex.schema.createTable('balance_holds', (t) => {
    t.bigIncrements('id');
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.bigInteger('amount_micros').notNullable();
    t.text('instance_id').notNullable().comment('the server running the request; its death releases the hold');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['instance_id']);
    t.index(['created_at']);
  });
  await knex.raw('ALTER TABLE balance_holds ADD CONSTRAINT balance_holds_positive CHECK (amount_micros > 0)');
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.text('instance_id').nullable().comment('the server running the request while state is running');
  });
  // A message posted under an Idempotency-Key carries it: a retry after a crash finds it instead of
  // posting it again.
  await knex.schema.alterTable('messages', (t) => {
    t.text('request_ref').nullable().unique();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('messages', (t) => t.dropColumn('request_ref'));
  await knex.schema.alterTable('idempotency_keys', (t) => t.dropColumn('instance_id'));
  await knex.schema.dropTable('balance_holds');
  await knex.schema.alterTable('organizations', (t) => t.dropColumn('held_micros'));
  await knex.schema.dropTable('instances');
}
