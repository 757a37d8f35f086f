import type { Knex } from 'knex';

// Money is kept in integer micro-units (1e-6 of the currency) so sums are exact.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('organizations', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.string('currency', 3).notNullable();
    t.bigInteger('balance_micros').nullable().comment('null: invoiced, never refused for money');
    t.bigInteger('text_rate_micros').notNullable().comment('per million characters');
    t.bigInteger('voice_rate_micros').notNullable().comment('per minute');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('organizations');
}
