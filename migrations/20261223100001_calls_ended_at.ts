import type { Knex } from 'knex';

// Housekeeping looks among the calls that ended lately for transcripts nobody said were ready (the
// instance holding the call's room died): by the time they ended, not through every call.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index calls_ended_at on calls (ended_at) where status = 'ended'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index calls_ended_at');
}
