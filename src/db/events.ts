// The statements that store events: each stores an event (or the rows a change inserts and an event for
// each) and queues the events' webhook deliveries in the same statement, so an event is never committed
// without its deliveries and storing them costs no extra round trip. Written once per shape; the domain
// (src/events/log.ts) decides what an event says.
import type { Knex } from 'knex';
import { statement, type Statement } from './statement.js';

/** SQL with `?` placeholders, and its values in order. */
export interface SqlPart {
  sql: string;
  values: readonly unknown[];
}

/**
 * An INSERT ... RETURNING * that stores rows, all or none, their ids ascending in the order they were
 * given, and the WITH clauses it reads from, if any (`name AS (...)`, comma-separated): PostgreSQL allows
 * data-modifying WITH clauses only at the top of a statement. Their SQL takes a bounded number of
 * shapes, whatever the number of rows: each shape's statement is written once.
 */
export interface AnnouncedInsert {
  with?: SqlPart;
  insert: SqlPart;
  /**
   * The rows are chat messages (the default): each event names its message (`events.message_id`), and
   * goes with it when retention erases it. Other rows (utterances) leave it empty.
   */
  messages?: boolean;
}

/** An event's row, as stored. */
export interface EventRowValues {
  id: string;
  orgId: string;
  mode: 'live' | 'test';
  type: string;
  sessionId: string | null;
  callId: string | null;
  appId: string | null;
  createdAt: string;
  payloadJson: string;
  signalJson: string | null;
  messageId: number | null;
}

/** The columns of an event's row in `events`. */
const EVENT_COLUMNS = 'id, org_id, mode, type, session_id, call_id, app_id, payload, signal, message_id';

/**
 * The INSERT that queues events for every enabled endpoint of their organization and mode that wants
 * their type, due at once, returning the event id of each delivery. `events` is a relation of the
 * events with columns `id`, `type`, `created_at`, `org_id` and `mode`. `onlyIf`, an SQL condition,
 * lets the statement decide whether events are stored.
 */
const deliveriesQueue = (events: string, onlyIf = 'true') =>
  `insert into webhook_deliveries (endpoint_id, event_id, event_type, next_attempt_at, created_at)
     select e.id, ev.id, ev.type, ev.created_at, ev.created_at from ${events} ev
       join webhook_endpoints e on e.org_id = ev.org_id and e.mode = ev.mode
      where e.disabled_at is null
        and (ev.type = any(e.enabled_events) or '*' = any(e.enabled_events)) and ${onlyIf}
     returning event_id`;

/** One event as the relation deliveriesQueue reads: its id, type, time, organization and mode, as placeholders in that order. */
const ONE_EVENT =
  '(select cast(? as text) as id, cast(? as text) as type, cast(? as timestamptz) as created_at, cast(? as text) as org_id, cast(? as text) as mode)';

const storingEvent = statement<{ seq: number; webhook_deliveries: number }>(
  `WITH queued AS (${deliveriesQueue(ONE_EVENT)})
   INSERT INTO events (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
   RETURNING seq, CAST((SELECT count(*) FROM queued) AS int) AS webhook_deliveries`,
);

/** Stores an event and queues its webhook deliveries: its sequence number and how many were queued. */
export async function insertEvent(db: Knex, event: EventRowValues): Promise<{ seq: number; webhookDeliveries: number }> {
  const [row] = await storingEvent.rows(db, [
    event.id,
    event.type,
    event.createdAt,
    event.orgId,
    event.mode,
    event.id,
    event.orgId,
    event.mode,
    event.type,
    event.sessionId,
    event.callId,
    event.appId,
    event.payloadJson,
    event.signalJson,
    event.messageId,
  ]);
  return { seq: row!.seq, webhookDeliveries: row!.webhook_deliveries };
}

/**
 * An event of an announced insert: its row, with its payload split around `data.id` (the statement puts
 * the stored row's id between the two). The events of one insert are one per row, in the rows' order, all
 * of one type.
 */
export type AnnouncingEvent = EventRowValues & { payloadHead: string; payloadTail: string };

export type AnnouncedRow = { id: number; event_seq: number; webhook_deliveries: number };
const announcingStatements = new Map<string, Statement<AnnouncedRow>>();

/**
 * The statement that stores the rows, an event for each (its payload's `data.id` set to the row's id)
 * and the events' webhook deliveries, per shape of the change. One row (most messages) takes its
 * event's fields as parameters; several (a session's waiting messages, the utterances of every call
 * that completed one meanwhile) take them as a JSON array, numbered to pair each event with its row.
 */
function announcing(change: AnnouncedInsert, oneRow: boolean): Statement<AnnouncedRow> {
  const namesMessage = change.messages ?? true;
  const withClauses = change.with ? `${change.with.sql}, ` : '';
  const shape = `${withClauses}\0${change.insert.sql}\0${namesMessage}\0${oneRow}`;
  let written = announcingStatements.get(shape);
  if (written) return written;
  written = statement<AnnouncedRow>(
    oneRow
      ? `WITH ${withClauses}stored AS (${change.insert.sql}),
         queued AS (${deliveriesQueue(ONE_EVENT, 'exists (select 1 from stored)')}),
         announced AS (
           INSERT INTO events (${EVENT_COLUMNS})
           SELECT ?, ?, ?, ?, ?, ?, ?, CAST(CAST(? AS text) || stored.id || CAST(? AS text) AS json), NULL, ${namesMessage ? 'stored.id' : 'NULL'}
             FROM stored
           RETURNING seq
         )
         SELECT stored.*, announced.seq AS event_seq, CAST((SELECT count(*) FROM queued) AS int) AS webhook_deliveries
           FROM stored, announced`
      : `WITH ${withClauses}stored AS (${change.insert.sql}),
         numbered AS (SELECT id, row_number() OVER (ORDER BY id) AS ord FROM stored),
         given AS (
           SELECT * FROM ROWS FROM (json_to_recordset(CAST(? AS json)) AS (
                    id text, org_id text, mode text, session_id text, call_id text, app_id text, created_at timestamptz, head text, tail text))
             WITH ORDINALITY AS g(id, org_id, mode, session_id, call_id, app_id, created_at, head, tail, ord)
         ),
         queued AS (${deliveriesQueue('(SELECT id, CAST(? AS text) AS type, created_at, org_id, mode FROM given)', 'exists (select 1 from stored)')}),
         announced AS (
           INSERT INTO events (${EVENT_COLUMNS})
           SELECT given.id, given.org_id, given.mode, CAST(? AS text), given.session_id, given.call_id, given.app_id,
                  CAST(given.head || numbered.id || given.tail AS json), NULL, ${namesMessage ? 'numbered.id' : 'NULL'}
             FROM numbered JOIN given USING (ord)
            ORDER BY ord
           RETURNING seq, id
         )
         SELECT stored.*, announced.seq AS event_seq,
                CAST((SELECT count(*) FROM queued WHERE queued.event_id = announced.id) AS int) AS webhook_deliveries
           FROM stored JOIN numbered USING (id) JOIN given USING (ord) JOIN announced ON announced.id = given.id
          ORDER BY stored.id`,
  );
  announcingStatements.set(shape, written);
  return written;
}

/**
 * Stores rows and an event for each in one statement, which needs no transaction around it: the events
 * and their deliveries are stored only when the insert stores the rows. The stored rows, in order, each
 * with its event's sequence number and count of queued deliveries; none when the insert stored none.
 */
export function insertRowsWithEvents(db: Knex, change: AnnouncedInsert, events: readonly AnnouncingEvent[]): Promise<AnnouncedRow[]> {
  const changeValues = [...(change.with?.values ?? []), ...change.insert.values];
  const { type } = events[0]!;
  if (events.length === 1) {
    const [e] = events as [AnnouncingEvent];
    return announcing(change, true).rows(db, [
      ...changeValues,
      e.id, type, e.createdAt, e.orgId, e.mode,
      e.id, e.orgId, e.mode, type, e.sessionId, e.callId, e.appId, e.payloadHead, e.payloadTail,
    ]);
  }
  const given = JSON.stringify(
    events.map((e) => ({
      id: e.id,
      org_id: e.orgId,
      mode: e.mode,
      session_id: e.sessionId,
      call_id: e.callId,
      app_id: e.appId,
      created_at: e.createdAt,
      head: e.payloadHead,
      tail: e.payloadTail,
    })),
  );
  return announcing(change, false).rows(db, [...changeValues, given, type, type]);
}
