// The stored event log: written in the caller's transaction with the change it reports (with the
// event's webhook deliveries), published to the bus once that transaction has committed, read back
// to resume a stream.
import type { Knex } from 'knex';
import { newId } from '../lib/ids.js';
import type { EventBus } from './bus.js';
import type { BusEvent, CallSignal, EventPayload, EventScope, NewEvent } from './types.js';
import { insertEvent, insertRowsWithEvents, type AnnouncedInsert, type EventRowValues } from '../db/events.js';
import type { WantedEvents } from './deliveredSequences.js';

interface EventRow {
  seq: number;
  id: string;
  org_id: string;
  mode: 'live' | 'test';
  session_id: string | null;
  call_id: string | null;
  payload: BusEvent['payload'];
  signal: CallSignal | null;
}

function toBusEvent(row: EventRow): BusEvent {
  const event: BusEvent = { payload: row.payload, orgId: row.org_id, mode: row.mode, sessionId: row.session_id, callId: row.call_id, seq: row.seq };
  if (row.signal) event.signal = row.signal;
  return event;
}

/**
 * What writes events: the store, the bus they are published on once committed, and the installed app
 * whose request makes them (named on each event), if one does.
 */
export interface EventWriter {
  db: Knex;
  events: EventBus;
  actingApp: string | null;
}

/** What the server does of its own accord, or on behalf of no app (the media plane's clock, webhooks, Twilio's callbacks). */
export const serverMade = ({ db, events }: Pick<EventWriter, 'db' | 'events'>): EventWriter => ({ db, events, actingApp: null });

function payloadOf(event: NewEvent, app: string | null): EventPayload {
  return {
    id: newId('evt'),
    type: event.type,
    created_at: new Date().toISOString(),
    livemode: event.mode === 'live',
    metadata: event.metadata,
    data: event.data,
    ...(app ? { app_id: app } : {}),
  };
}

/** An event about to be stored: its payload, serialised once (these bytes are stored and streamed). */
interface ReadyEvent {
  event: NewEvent;
  payload: EventPayload;
  payloadJson: string;
}

function readyToStore(event: NewEvent, app: string | null): ReadyEvent {
  const payload = payloadOf(event, app);
  return { event, payload, payloadJson: JSON.stringify(payload) };
}

function recorded({ event, payloadJson }: ReadyEvent, seq: number, webhookDeliveries: number): BusEvent {
  const busEvent: BusEvent = {
    // What a stream replaying the log would read: the payload as it was stored, not the caller's objects.
    payload: JSON.parse(payloadJson),
    payloadJson,
    orgId: event.orgId,
    mode: event.mode,
    sessionId: event.sessionId ?? null,
    callId: event.callId ?? null,
    seq,
  };
  if (event.signal) busEvent.signal = event.signal;
  if (webhookDeliveries) busEvent.webhookDeliveries = webhookDeliveries;
  return busEvent;
}

/** The event's row as the store takes it. */
const rowOf = ({ event, payload, payloadJson }: ReadyEvent): EventRowValues => ({
  id: payload.id,
  orgId: event.orgId,
  mode: event.mode,
  type: event.type,
  sessionId: event.sessionId ?? null,
  callId: event.callId ?? null,
  appId: payload.app_id ?? null,
  createdAt: payload.created_at,
  payloadJson,
  signalJson: event.signal ? JSON.stringify(event.signal) : null,
  messageId: event.messageId ?? null,
});

/** Stores the event and queues its webhook deliveries, in one statement: both commit, or neither. */
async function recordEvent(db: Knex, event: NewEvent, app: string | null): Promise<BusEvent> {
  const ready = readyToStore(event, app);
  const { seq, webhookDeliveries } = await insertEvent(db, rowOf(ready));
  return recorded(ready, seq, webhookDeliveries);
}

/** What an announced event's `data.id` holds until its row is stored: no row has it (ids are positive). */
const ID_TO_FILL = -Number.MAX_SAFE_INTEGER;
const ID_KEY_JSON = '"id":';
const ID_TO_FILL_JSON = `${ID_KEY_JSON}${ID_TO_FILL}`;

/**
 * An announced event's serialised payload around its `data.id`, which the statement fills in as text
 * (the bytes stay those that are streamed). The placeholder cannot be inside a string of the payload:
 * there a `"` is always escaped.
 */
function aroundId(payloadJson: string): { payloadHead: string; payloadTail: string } {
  const at = payloadJson.indexOf(ID_TO_FILL_JSON);
  if (at < 0 || payloadJson.indexOf(ID_TO_FILL_JSON, at + 1) >= 0) throw new Error('an announced event names its row by data.id once');
  return { payloadHead: payloadJson.slice(0, at + ID_KEY_JSON.length), payloadTail: payloadJson.slice(at + ID_TO_FILL_JSON.length) };
}

/**
 * Stores rows and the events announcing them in one statement, which needs no transaction around it:
 * the events and their webhook deliveries are stored only when the insert stores the rows (else
 * undefined). `prospective` are the rows in the order the insert stores them. An event is built before
 * its row has an id: its `data.id` is filled in from the stored row, in the statement and in what is
 * returned (nothing else in `data` may depend on the id).
 */
export async function insertAnnounced<Row extends { id: number }>(
  db: Knex,
  change: AnnouncedInsert,
  prospective: ReadonlyArray<{ row: Omit<Row, 'id'>; announce: (row: Row) => NewEvent; app: string | null }>,
): Promise<Array<{ row: Row; event: BusEvent }> | undefined> {
  const ready = prospective.map(({ row, announce, app }) => readyToStore(announce({ ...row, id: ID_TO_FILL } as Row), app));
  const { type } = ready[0]!.event;
  if (ready.some((r) => r.event.type !== type)) throw new Error('the events of one announced insert must share their type');
  if (ready.some((r) => r.event.signal)) throw new Error('an announced insert stores no call signal');
  const aroundIds = ready.map(({ payloadJson }) => aroundId(payloadJson));
  const stored = await insertRowsWithEvents(db, change, ready.map((r, i) => ({ ...rowOf(r), ...aroundIds[i]! })));
  if (!stored.length) return undefined;
  if (stored.length !== ready.length) throw new Error(`an announced insert stored ${stored.length} of ${ready.length} rows`);
  return stored.map(({ event_seq: seq, webhook_deliveries: deliveries, ...row }, i) => {
    const { payloadHead, payloadTail } = aroundIds[i]!;
    const announced = { ...ready[i]!, payloadJson: payloadHead + row.id + payloadTail };
    return { row: row as unknown as Row, event: recorded(announced, seq, deliveries) };
  });
}

/** An event that is announced but not kept (typing): it cannot be resumed from. */
export function ephemeralEvent(event: NewEvent, app: string | null): BusEvent {
  return {
    payload: payloadOf(event, app),
    orgId: event.orgId,
    mode: event.mode,
    sessionId: event.sessionId ?? null,
    callId: event.callId ?? null,
    seq: null,
  };
}

/**
 * Runs `work` in a transaction whose `emit` records events with the change; they reach the bus only
 * after the commit, so a stream never shows a change that was rolled back. `announced` takes events
 * the work stored itself, in the statement of the change (`insertAnnounced`), in the order of `emit`.
 */
export async function withEvents<T>(
  { db, events, actingApp }: EventWriter,
  work: (
    trx: Knex.Transaction,
    emit: (event: NewEvent) => Promise<void>,
    announced: (event: BusEvent) => void,
  ) => Promise<T>,
): Promise<T> {
  const recorded: BusEvent[] = [];
  const result = await db.transaction((trx) =>
    work(
      trx,
      async (event) => void recorded.push(await recordEvent(trx, event, actingApp)),
      (event) => void recorded.push(event),
    ),
  );
  for (const event of recorded) events.publish(event);
  return result;
}

export type StreamScope = EventScope;

const scoped = (db: Knex, scope: StreamScope) => {
  const query = db<EventRow>('events').where({ org_id: scope.orgId, mode: scope.mode });
  return scope.sessionId ? query.andWhere({ session_id: scope.sessionId }) : query;
};

/** The position of an event id within the scope, or null when the scope has no such event. */
export async function sequenceOf(db: Knex, scope: StreamScope, eventId: string): Promise<number | null> {
  const row = await scoped(db, scope).andWhere({ id: eventId }).first('seq');
  return row ? row.seq : null;
}

export async function eventsAfter(db: Knex, scope: StreamScope, afterSeq: number, limit: number): Promise<BusEvent[]> {
  const rows = await scoped(db, scope).andWhere('seq', '>', afterSeq).orderBy('seq').limit(limit);
  return rows.map(toBusEvent);
}

/**
 * Stored events of every organization, in log order: those after `after` and those of `missing` (below
 * it); at most `limit`. What an instance reads when Redis may not have brought it everything.
 */
export async function storedEventsWanted(db: Knex, { after, missing }: WantedEvents, limit: number): Promise<BusEvent[]> {
  const query = db<EventRow>('events').where('seq', '>', after);
  if (missing.length) query.orWhereIn('seq', missing);
  const rows = await query.orderBy('seq').limit(limit);
  return rows.map(toBusEvent);
}

export async function latestSequence(db: Knex): Promise<number> {
  const row = await db('events').max<{ max: number | null }>({ max: 'seq' }).first();
  return row?.max ?? 0;
}
