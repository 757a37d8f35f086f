import type { Knex } from 'knex';

// Rotating a webhook secret with an overlap: the replaced secret keeps signing beside the new one
// until `previous_secret_expires_at`, sealed like the current one, then is forgotten (housekeeping).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.text('previous_secret_sealed').nullable().comment('the secret replaced by the last rotation, sealed with SECRETS_KEY, while it still signs');
    t.timestamp('previous_secret_expires_at', { useTz: true }).nullable();
    t.check('(previous_secret_sealed is null) = (previous_secret_expires_at is null)', [], 'webhook_endpoints_previous_secret_whole');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropChecks('webhook_endpoints_previous_secret_whole');
    t.dropColumn('previous_secret_expires_at');
    t.dropColumn('previous_secret_sealed');
  });
}
