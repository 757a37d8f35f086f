import type { Knex } from 'knex';

// Search without a join: each utterance and message carries its organization and mode (copied from its call
// or session when stored; neither ever changes), so GET /v1/search walks one organization's newest rows
// through an index of their own instead of every organization's rows, each joined to its call or session.
export async function up(knex: Knex): Promise<void> {
  for (const [table, owner, key] of [
    ['call_utterances', 'calls', 'call_id'],
    ['messages', 'sessions', 'session_id'],
  ] as const) {
    await knex.schema.alterTable(table, (t) => {
      t.text('org_id').nullable();
      t.text('mode').nullable();
    });
    await knex.raw(`update ${table} x set org_id = o.org_id, mode = o.mode from ${owner} o where o.id = x.${key}`);
    await knex.raw(`alter table ${table} alter column org_id set not null, alter column mode set not null`);
    await knex.raw(`create index ${table}_search_order on ${table} (org_id, mode, created_at, id)`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['call_utterances', 'messages']) {
    await knex.raw(`drop index ${table}_search_order`);
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('org_id');
      t.dropColumn('mode');
    });
  }
}
