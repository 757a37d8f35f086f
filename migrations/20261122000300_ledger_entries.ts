import type { Knex } from 'knex';

// Every change of a prepaid balance is one row here, written in the same transaction as the change.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ledger_entries', (t) => {
    t.bigIncrements('id');
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('mode').notNullable().checkIn(['live', 'test']);
    t.text('kind').notNullable().comment('credit, text, voice_message, call');
    t.bigInteger('quantity').notNullable().defaultTo(0).comment('characters or seconds charged');
    t.bigInteger('amount_micros').notNullable().comment('positive adds to the balance, negative charges');
    t.text('reference').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ledger_entries');
}
