import type { Knex } from 'knex';

export const EVENT_RETENTION_DAYS = 30;

/**
 * Erases messages older than their session's `retention_days` (recordings go with them), and the
 * stored events that carried their content; events in general are kept 30 days.
 */
export async function eraseExpiredData(db: Knex): Promise<{ messages: number; events: number }> {
  return db.transaction(async (trx) => {
    const messages = await trx.raw(
      `delete from messages m using sessions s
        where m.session_id = s.id and s.retention_days is not null
          and m.created_at < now() - make_interval(days => s.retention_days)`,
    );
    const orphaned = await trx.raw(
      `delete from events e where e.message_id is not null
          and not exists (select 1 from messages m where m.id = e.message_id)`,
    );
    const old = await trx('events').where('created_at', '<', trx.raw(`now() - make_interval(days => ?)`, [EVENT_RETENTION_DAYS])).del();
    return { messages: affected(messages), events: affected(orphaned) + old };
  });
}

/** Rows a raw statement changed: pg reports `rowCount`, PGlite `affectedRows`. */
const affected = (result: { rowCount?: number; affectedRows?: number }) => result.rowCount ?? result.affectedRows ?? 0;
