// The stored event log: written in the caller's transaction with the change it reports (with the
// event's webhook deliveries), published to the bus once that transaction has committed, read back
// to resume a stream.
import type { Knex } from 'knex';
import { newId } from '../ids.js';
import type { EventBus } from './bus.js';
import { actingApp } from '../oauth/actingApp.js';
import { queueDeliveries } from '../webhooks/deliveries.js';
import type { BusEvent, EventPayload, EventScope, NewEvent } from './types.js';

interface EventRow {
  seq: number;
  id: string;
  org_id: string;
  mode: 'live' | 'test';
  session_id: string | null;
  call_id: string | null;
  payload: BusEvent['payload'];
}

const toBusEvent = (row: EventRow): BusEvent => ({
  payload: row.payload,
  orgId: row.org_id,
  mode: row.mode,
  sessionId: row.session_id,
  callId: row.call_id,
  seq: row.seq,
});

function payloadOf(event: NewEvent): EventPayload {
  const app = actingApp();
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

export async function recordEvent(db: Knex, event: NewEvent): Promise<BusEvent> {
  const payload = payloadOf(event);
  // Serialised once: these bytes are stored, and sent to every stream that shows the event as stored.
  const payloadJson = JSON.stringify(payload);
  // One statement stores the event and queues its webhook deliveries: both commit, or neither.
  const queued = queueDeliveries(db, { id: payload.id, type: event.type, orgId: event.orgId, mode: event.mode, createdAt: payload.created_at });
  const [row]: Array<{ seq: number; webhook_deliveries: number }> = await db('events')
    .with('queued', queued)
    .insert({
      id: payload.id,
      org_id: event.orgId,
      mode: event.mode,
      type: event.type,
      session_id: event.sessionId ?? null,
      call_id: event.callId ?? null,
      message_id: event.messageId ?? null,
      app_id: payload.app_id ?? null,
      payload: payloadJson,
    } as never)
    .returning(['seq', db.raw('(select count(*) from queued)::int as webhook_deliveries')] as never);
  const recorded: BusEvent = {
    // What a stream replaying the log would read: the payload as it was stored, not the caller's objects.
    payload: JSON.parse(payloadJson),
    payloadJson,
    orgId: event.orgId,
    mode: event.mode,
    sessionId: event.sessionId ?? null,
    callId: event.callId ?? null,
    seq: row.seq,
  };
  if (event.signal) recorded.signal = event.signal;
  if (row.webhook_deliveries) recorded.webhookDeliveries = row.webhook_deliveries;
  return recorded;
}

/** An event that is announced but not kept (typing): it cannot be resumed from. */
export function ephemeralEvent(event: NewEvent): BusEvent {
  return {
    payload: payloadOf(event),
    orgId: event.orgId,
    mode: event.mode,
    sessionId: event.sessionId ?? null,
    callId: event.callId ?? null,
    seq: null,
  };
}

/**
 * Runs `work` in a transaction whose `emit` records events with the change; they reach the bus only
 * after the commit, so a stream never shows a change that was rolled back.
 */
export async function withEvents<T>(
  db: Knex,
  bus: EventBus,
  work: (trx: Knex.Transaction, emit: (event: NewEvent) => Promise<void>) => Promise<T>,
): Promise<T> {
  const recorded: BusEvent[] = [];
  const result = await db.transaction((trx) => work(trx, async (event) => void recorded.push(await recordEvent(trx, event))));
  for (const event of recorded) bus.publish(event);
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

export async function latestSequence(db: Knex): Promise<number> {
  const row = await db('events').max<{ max: number | null }>({ max: 'seq' }).first();
  return row?.max ?? 0;
}
