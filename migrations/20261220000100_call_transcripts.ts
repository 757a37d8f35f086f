import type { Knex } from 'knex';

// Call records (DESIGN.md §12): each completed turn of a side's speech, in its language and as the other
// side heard it, kept per call unless the call turned its transcript off, erased after `retention_days`.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('calls', (t) => {
    t.boolean('transcript').notNullable().defaultTo(true).comment('false: no utterance is kept');
    t.integer('retention_days').nullable().comment('days utterances are kept; null: until erased');
    t.timestamp('transcript_ready_at', { useTz: true }).nullable().comment('call.transcript.ready was emitted');
  });
  await knex.schema.createTable('call_utterances', (t) => {
    t.bigIncrements('id');
    t.text('call_id').notNullable().references('calls.id').onDelete('CASCADE');
    t.text('side').notNullable().checkIn(['agent', 'customer']);
    t.text('speaker').notNullable();
    t.text('language').notNullable();
    t.text('text').notNullable();
    t.text('translation_language').notNullable();
    t.text('translation_text').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.timestamp('ended_at', { useTz: true }).notNullable();
    t.integer('offset_ms').notNullable().comment('started_at after the call was created');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['call_id', 'id']);
    t.index(['created_at']);
  });
  // Erasing a transcript erases the events that carried its words.
  await knex.raw(`create index events_call_utterances on events (call_id) where type = 'call.utterance'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index events_call_utterances');
  await knex.schema.dropTable('call_utterances');
  await knex.schema.alterTable('calls', (t) => {
    t.dropColumn('transcript');
    t.dropColumn('retention_days');
    t.dropColumn('transcript_ready_at');
  });
}
