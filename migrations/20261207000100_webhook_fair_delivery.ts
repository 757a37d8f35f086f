import type { Knex } from 'knex';

// Fair webhook delivery. A claimed delivery carries a lease (`lease_expires_at`) instead of a moved
// `next_attempt_at`: rows under lease are the attempts in flight, counted per endpoint and per
// organization by the claim so the bounds hold across every instance sharing the database. An
// endpoint's circuit breaker: failed attempts in a row, and until when its due deliveries are not
// claimed (after that, one probe).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.timestamp('lease_expires_at', { useTz: true }).nullable().comment('while an attempt is in flight: when its claim lapses if its instance dies');
  });
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.integer('consecutive_failures').notNullable().defaultTo(0).comment('failed attempts since the last success');
    t.timestamp('circuit_open_until', { useTz: true }).nullable().comment('its due deliveries wait until then; then one probe');
  });
  // The claim walks endpoints with something due, taking each one's oldest due deliveries.
  await knex.raw('drop index webhook_deliveries_due');
  await knex.raw(`create index webhook_deliveries_due on webhook_deliveries (endpoint_id, next_attempt_at, id) where status = 'pending'`);
  // Leases are cleared when the attempt is recorded: this index holds the attempts in flight.
  await knex.raw('create index webhook_deliveries_leased on webhook_deliveries (lease_expires_at) where lease_expires_at is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index webhook_deliveries_leased');
  await knex.raw('drop index webhook_deliveries_due');
  await knex.raw(`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`);
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropColumn('circuit_open_until');
    t.dropColumn('consecutive_failures');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('lease_expires_at');
  });
}
