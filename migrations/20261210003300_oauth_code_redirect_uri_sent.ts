import type { Knex } from 'knex';

// RFC 6749 4.1.3: the token request must repeat `redirect_uri` only if the authorization request
// named it. An app with a single registered redirect URI may leave it out of both; the code still
// records where it was sent (`redirect_uri`), and now whether the request said so. Codes already
// issued (60 s) were all treated as named, which stays their value.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_codes', (t) => {
    t.boolean('redirect_uri_sent').notNullable().defaultTo(true).comment('the authorization request named redirect_uri, so the token request must repeat it');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_codes', (t) => t.dropColumn('redirect_uri_sent'));
}
