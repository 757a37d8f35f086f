import type { Knex } from 'knex';

// How each call's media went (DESIGN.md §12): what its rooms counted, merged (src/calls/mediaStats.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('calls', (t) => {
    t.jsonb('media_stats').nullable().comment('presence, interpretation, dropped chunks and latency samples its rooms counted');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('calls', (t) => t.dropColumn('media_stats'));
}
