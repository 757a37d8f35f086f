import type { Knex } from 'knex';

// The event log behind the live streams: `seq` orders delivery and resumption (Last-Event-ID).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('events', (t) => {
    t.bigIncrements('seq');
    t.text('id').notNullable().unique();
    t.text('org_id').notNullable().references('organizations.id').onDelete('CASCADE');
    t.text('mode').notNullable().checkIn(['live', 'test']);
    t.text('type').notNullable();
    t.text('session_id').nullable().comment('no foreign key: session.deleted outlives its session');
    t.text('call_id').nullable();
    t.bigInteger('message_id').nullable().comment('erased with the message when retention ends');
    t.json('payload').notNullable().comment('the event exactly as streamed');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['org_id', 'mode', 'seq']);
    t.index(['session_id', 'seq']);
    t.index(['message_id']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('events');
}
