import type { Knex } from 'knex';

// Full-text search over call transcripts and chat messages (GET /v1/search, DESIGN.md §12): a tsvector
// column each, generated with the language-neutral 'simple' configuration (no stemming, no stop words:
// every language matches its own words), under a GIN index.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table call_utterances add column search tsvector
    generated always as (to_tsvector('simple', text || ' ' || translation_text)) stored`);
  await knex.raw('create index call_utterances_search on call_utterances using gin (search)');
  await knex.raw(`alter table messages add column search tsvector
    generated always as (to_tsvector('simple', text || ' ' || agent_text || ' ' || customer_text)) stored`);
  await knex.raw('create index messages_search on messages using gin (search)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index messages_search');
  await knex.raw('alter table messages drop column search');
  await knex.raw('drop index call_utterances_search');
  await knex.raw('alter table call_utterances drop column search');
}
