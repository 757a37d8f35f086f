import type { Knex } from 'knex';

// Translations an engine already made, keyed by a hash of everything that shapes the result, so a
// repeated text is served without the engine (and, since no engine translated it, without a charge).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('translation_cache', (t) => {
    t.text('key_hash').primary();
    t.text('engine').notNullable();
    t.text('translation').notNullable();
    t.text('detected_source_language').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('translation_cache');
}
