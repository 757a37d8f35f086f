import type { Knex } from 'knex';

// When each periodic job last ran, so that several instances run it once per period between them.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('job_runs', (t) => {
    t.text('name').primary();
    t.timestamp('last_run_at', { useTz: true }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('job_runs');
}
