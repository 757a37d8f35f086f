import type { Knex } from 'knex';

// The organization's transcript switch (DESIGN.md §12): off, calls created from then on keep no
// transcript (each call records the setting in force when it was created, in calls.transcript).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => {
    t.boolean('transcripts').notNullable().defaultTo(true).comment('false: calls created meanwhile keep no transcript');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('organizations', (t) => t.dropColumn('transcripts'));
}
