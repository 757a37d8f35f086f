import type { Knex } from 'knex';

// An organization's terms (currency, rates, and whether a prepaid balance pays) never change once it
// exists: every instance keeps them in memory without invalidation (src/db/organizations.ts).
// The database refuses a change, so a future feature that wants one cannot silently leave instances
// charging at old rates: it has to give the cache an invalidation first.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function organization_terms_fixed() returns trigger language plpgsql as $$
    begin
      raise exception 'an organization''s currency, rates and billing (prepaid or invoiced) do not change: instances keep them in memory';
    end $$`);
  // WHEN is checked without calling the function: balance changes (every charge) pay only for it.
  await knex.raw(`
    create trigger organization_terms_fixed before update on organizations for each row
    when (old.currency is distinct from new.currency
       or old.text_rate_micros is distinct from new.text_rate_micros
       or old.voice_rate_micros is distinct from new.voice_rate_micros
       or (old.balance_micros is null) <> (new.balance_micros is null))
    execute function organization_terms_fixed()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger organization_terms_fixed on organizations');
  await knex.raw('drop function organization_terms_fixed()');
}
