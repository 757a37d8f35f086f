import type { Knex } from 'knex';

// What a call's change means for its media (src/events/types.ts CallSignal), kept with the event: an
// instance that reads events from the log because Redis did not bring them (src/events/redisBus.ts)
// ends or changes the call's room as it would have on hearing them. Never streamed.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => t.jsonb('signal').nullable());
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => t.dropColumn('signal'));
}
