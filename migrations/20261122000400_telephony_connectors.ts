import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('telephony_connectors', (t) => {
    t.text('org_id').primary().references('organizations.id').onDelete('CASCADE');
    t.text('account_sid').notNullable();
    t.text('auth_token').notNullable();
    t.text('from_number').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('telephony_connectors');
}
