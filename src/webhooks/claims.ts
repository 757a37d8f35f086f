// Claiming due webhook deliveries, fairly. A claim writes a lease on the rows it takes (no transaction
// stays open while a receiver answers, which PGlite's single connection needs); leased rows are the
// attempts in flight, so the claim can bound them per endpoint and per organization and mode for every
// instance sharing the database at once. Claims take a transaction-scoped advisory lock, one after
// another across instances: two at the same moment would each count the other's rows as free. The
// rows are still taken FOR UPDATE SKIP LOCKED, passing over a delivery a resend or a recording holds.
//
// Order: each organization's (and mode's) oldest due delivery first, then each one's second, and so on
// (a window ranks deliveries within their organization); so one organization's backlog of thousands
// waits behind nobody else's first delivery. An endpoint whose circuit is open is skipped; one whose
// pause is over gets a single attempt (the probe).
import type { Knex } from 'knex';

/** pg_advisory_xact_lock's key of the claim (any fixed number, unique in the database; src/deployment/housekeeping.ts has another). */
const CLAIM_LOCK = 7_304_152_002;

export interface ClaimedDelivery {
  id: string;
  event_type: string;
  attempt_count: number;
  first_attempted_at: Date | null;
  /** The event as stored: the bytes the streams send are the bytes signed and sent. */
  body: string;
  endpoint_id: string;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

export interface ClaimLimits {
  /** How many deliveries this claim may take (the caller's free slots). */
  slots: number;
  perOrganization: number;
  perEndpoint: number;
}

/** Leases up to `limits.slots` due deliveries until `leaseUntil`, within the bounds, fairly; returns them to send. */
export async function claimDueDeliveries(db: Knex, now: number, leaseUntil: number, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  const at = new Date(now);
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [CLAIM_LOCK]);
    const { rows } = await trx.raw<{ rows: ClaimedDelivery[] }>(
      `with busy as (
         select f.endpoint_id, e.org_id, e.mode
           from webhook_deliveries f join webhook_endpoints e on e.id = f.endpoint_id
          where f.lease_expires_at > :at
       ),
       endpoint_busy as (select endpoint_id, count(*) as attempts from busy group by endpoint_id),
       organization_busy as (select org_id, mode, count(*) as attempts from busy group by org_id, mode),
       ready as (
         select e.id, e.org_id, e.mode,
                (case when e.circuit_open_until is null then :perEndpoint else 1 end) - coalesce(eb.attempts, 0) as endpoint_room,
                :perOrganization - coalesce(ob.attempts, 0) as organization_room
           from webhook_endpoints e
           left join endpoint_busy eb on eb.endpoint_id = e.id
           left join organization_busy ob on ob.org_id = e.org_id and ob.mode = e.mode
          where e.disabled_at is null
            and (e.circuit_open_until is null or e.circuit_open_until <= :at)
            and exists (select 1 from webhook_deliveries d
                         where d.endpoint_id = e.id and d.status = 'pending' and d.next_attempt_at <= :at)
       ),
       due as (
         select d.id, d.next_attempt_at, r.organization_room,
                row_number() over (partition by r.org_id, r.mode order by d.next_attempt_at, d.id) as turn
           from ready r
           cross join lateral (
             select d.id, d.next_attempt_at from webhook_deliveries d
              where d.endpoint_id = r.id and d.status = 'pending' and d.next_attempt_at <= :at
                and (d.lease_expires_at is null or d.lease_expires_at <= :at)
              order by d.next_attempt_at, d.id
              limit greatest(r.endpoint_room, 0)
              for update skip locked
           ) d
          where r.organization_room > 0
       ),
       chosen as (
         select id from due where turn <= organization_room
          order by turn, next_attempt_at, id
          limit :slots
       )
       update webhook_deliveries d set lease_expires_at = :leaseUntil
         from chosen, webhook_endpoints e, events ev
        where d.id = chosen.id and e.id = d.endpoint_id and ev.id = d.event_id
        returning d.id, d.event_type, d.attempt_count, d.first_attempted_at, ev.payload::text as body,
                  e.id as endpoint_id, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at`,
      { at, leaseUntil: new Date(leaseUntil), ...limits },
    );
    return rows;
  });
}
