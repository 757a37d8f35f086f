// The delivery queue as clients see it and as events fill it: one delivery per event and matching
// endpoint, with every attempt made; a delivery can be sent again on request.
import type { Knex } from 'knex';
import type { Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import { findEndpoint } from './endpoints.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  first_attempted_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

interface AttemptRow {
  delivery_id: string;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
}

export interface DeliveryOut {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: Array<{ attempted_at: string; status_code: number | null; error: string | null }>;
  next_attempt_at: string | null;
  created_at: string;
}

export async function presentDeliveries(db: Knex, rows: DeliveryRow[]): Promise<DeliveryOut[]> {
  const attempts = rows.length
    ? await db<AttemptRow>('webhook_attempts')
        .whereIn(
          'delivery_id',
          rows.map((row) => row.id),
        )
        .orderBy('id')
    : [];
  return rows.map((row) => ({
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: attempts
      .filter((attempt) => attempt.delivery_id === row.id)
      .map((attempt) => ({ attempted_at: attempt.attempted_at.toISOString(), status_code: attempt.status_code, error: attempt.error })),
    next_attempt_at: row.status === 'pending' && row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
  }));
}

export interface DeliveryFilter {
  status?: DeliveryStatus;
  limit?: number;
}

/** An endpoint's deliveries, newest first, each with its attempts (oldest first). */
export async function listDeliveries(db: Knex, payer: Payer, endpointId: string, filter: DeliveryFilter): Promise<DeliveryOut[]> {
  await findEndpoint(db, payer, endpointId);
  return deliveriesOf(db, endpointId, filter);
}

/** The deliveries of an endpoint the caller already knows is the payer's. */
export async function deliveriesOf(db: Knex, endpointId: string, filter: DeliveryFilter): Promise<DeliveryOut[]> {
  const query = db<DeliveryRow>('webhook_deliveries').where({ endpoint_id: endpointId });
  if (filter.status) query.andWhere({ status: filter.status });
  const rows = await query
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(filter.limit ?? 50);
  return presentDeliveries(db, rows);
}

/**
 * Queues one more attempt now, whatever the delivery's state. Retries after it stay within three days
 * of the delivery's first attempt: a resend of a delivery that gave up is tried once.
 */
export async function resendDelivery(db: Knex, payer: Payer, endpointId: string, deliveryId: string, now: number): Promise<DeliveryOut> {
  const row = await db.transaction(async (trx) => {
    const endpoint = await findEndpoint(trx, payer, endpointId);
    if (endpoint.disabled_at) throw errors.conflict('the webhook endpoint is disabled; enable it (PATCH disabled: false) before sending again');
    const [updated] = await trx<DeliveryRow>('webhook_deliveries')
      .where({ id: deliveryId, endpoint_id: endpointId })
      .update({ status: 'pending', next_attempt_at: new Date(now) })
      .returning('*');
    if (!updated) throw errors.notFound('webhook delivery');
    return updated;
  });
  return (await presentDeliveries(db, [row]))[0];
}
