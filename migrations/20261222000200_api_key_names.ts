import type { Knex } from 'knex';

// API keys as the console lists them (a name, the last four characters, who made them), and rolling a
// key: the replaced key keeps working until `expires_at` (the overlap chosen), then stops by itself.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.text('name').nullable().comment('what the key is for, as its maker named it');
    t.text('last_four').nullable().comment('the last four characters of the key, to recognise it; null for keys made before');
    t.text('created_by').nullable().comment('the email of the member who made it; null: the admin API');
    t.timestamp('expires_at', { useTz: true }).nullable().comment('a rolled key works until then');
    t.text('replaced_by').nullable().comment('the key that a roll made in its place');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    for (const column of ['replaced_by', 'expires_at', 'created_by', 'last_four', 'name']) t.dropColumn(column);
  });
}
