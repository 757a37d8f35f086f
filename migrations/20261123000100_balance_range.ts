import type { Knex } from 'knex';

// A prepaid balance stays within ±1,000,000,000 (in micro-units ±1e15), so it remains an exact JS
// number however many credits an operator books; src/db/errors.ts turns a violation into a 422.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'alter table organizations add constraint organizations_balance_range check (balance_micros between -1000000000000000 and 1000000000000000)',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table organizations drop constraint organizations_balance_range');
}
