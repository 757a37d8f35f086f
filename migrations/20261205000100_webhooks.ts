import type { Knex } from 'knex';

// Signed webhooks: endpoints an organization registers per mode, and a durable delivery queue.
// A delivery (one event for one endpoint) is queued in the statement that stores the event, so
// nothing committed is ever lost; workers claim due deliveries with FOR UPDATE SKIP LOCKED and
// record every attempt. Deliveries go with their event when retention erases it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.text('id').primary();
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('mode').notNullable().checkIn(['live', 'test']);
    t.text('url').notNullable();
    t.text('description').nullable();
    t.specificType('enabled_events', 'text[]').notNullable().comment("event types, or '*' for all");
    t.text('secret_sealed').notNullable().comment('the signing secret, sealed with SECRETS_KEY');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('disabled_at', { useTz: true }).nullable();
    t.text('disabled_reason').nullable().checkIn(['manual', 'failing']);
    t.timestamp('failing_since', { useTz: true }).nullable().comment('first failed attempt since the last success');
    t.index(['org_id', 'mode']);
  });
  // Delivery ids are made by the database: deliveries are inserted by INSERT ... SELECT, one per
  // matching endpoint. Not secrets (they are the Webhook-Id header), so random() is enough.
  await knex.raw(`
    create function webhook_delivery_id() returns text language sql volatile as $$
      select 'wd_' || string_agg(substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 1 + floor(random() * 62)::int, 1), '')
        from generate_series(1, 16)
    $$`);
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary().defaultTo(knex.raw('webhook_delivery_id()'));
    t.text('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.text('event_id').notNullable().references('events.id').onDelete('CASCADE');
    t.text('event_type').notNullable();
    t.text('status').notNullable().defaultTo('pending').checkIn(['pending', 'succeeded', 'failed']);
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.timestamp('first_attempted_at', { useTz: true }).nullable();
    t.timestamp('next_attempt_at', { useTz: true }).nullable().comment('while pending: when it is due (or its claim lapses)');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['endpoint_id', 'event_id']);
    t.index(['endpoint_id', 'created_at']);
    t.index(['event_id']);
  });
  await knex.raw(`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`);
  await knex.schema.createTable('webhook_attempts', (t) => {
    t.bigIncrements('id');
    t.text('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.timestamp('attempted_at', { useTz: true }).notNullable();
    t.integer('status_code').nullable().comment("the receiver's HTTP status; null when there was no answer");
    t.text('error').nullable();
    t.index(['delivery_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.raw('drop function webhook_delivery_id()');
  await knex.schema.dropTable('webhook_endpoints');
}
