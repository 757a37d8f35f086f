import type { Knex } from 'knex';

// Inbound phone calls (DESIGN §13): the numbers an organization owns at Twilio whose callers are
// interpreted; the PINs that join a side of an open call from a `pin` number (hashed, one per side,
// unique among the organization's PINs of a mode); and which way a phone leg went (a leg may now be a
// caller Twilio put through to us).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('phone_numbers', (t) => {
    t.text('id').primary();
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('mode').notNullable().comment('live or test: the mode of the key that registered it');
    t.text('number').notNullable().comment('E.164');
    t.text('answering').notNullable().comment('new_call or pin (the API calls it mode)');
    t.text('agent_language').notNullable();
    t.text('agent_name').nullable();
    t.jsonb('customer_languages').nullable().comment('the languages of the spoken menu, in the order of its keys; null: guessed from the caller');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['org_id', 'mode', 'number']);
    t.index(['org_id', 'mode', 'created_at']);
  });
  await knex.raw("ALTER TABLE phone_numbers ADD CONSTRAINT phone_numbers_mode CHECK (mode IN ('live', 'test'))");
  await knex.raw("ALTER TABLE phone_numbers ADD CONSTRAINT phone_numbers_answering CHECK (answering IN ('new_call', 'pin'))");

  await knex.schema.createTable('call_phone_pins', (t) => {
    t.text('call_id').notNullable().references('calls.id').onDelete('CASCADE');
    t.text('side').notNullable();
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('mode').notNullable();
    t.text('pin_hash').notNullable().comment('sha-256 of org, mode and PIN: the PIN itself is shown once');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['call_id', 'side']);
    t.unique(['org_id', 'mode', 'pin_hash']);
  });
  await knex.raw("ALTER TABLE call_phone_pins ADD CONSTRAINT call_phone_pins_side CHECK (side IN ('agent', 'customer'))");

  await knex.schema.alterTable('phone_legs', (t) => {
    t.text('direction').notNullable().defaultTo('outbound').comment('outbound: dialled by the API; inbound: a caller of a phone number');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('phone_legs', (t) => t.dropColumn('direction'));
  await knex.schema.dropTable('call_phone_pins');
  await knex.schema.dropTable('phone_numbers');
}
