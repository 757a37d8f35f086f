// Sends queued webhook deliveries. A pass claims due deliveries (FOR UPDATE SKIP LOCKED, so instances
// sharing PostgreSQL never claim the same one; the claim is a lease written in one short statement, so
// no transaction stays open while a receiver answers, which PGlite's single connection needs), POSTs
// each signed event, and records the attempt: 2xx succeeds; anything else is retried with exponential
// backoff until three days after the first attempt, then the delivery fails. An endpoint whose
// deliveries have failed for three days without a success is disabled, with an event saying so.
//
// Passes run one after another in a process: when an event queued deliveries (at once), on a timer
// (retries), and when a test calls `tick()` after moving the injected clock.
import http from 'node:http';
import https from 'node:https';
import type { AppContext } from '../appContext.js';
import { serverMade, withEvents } from '../events/log.js';
import { openText } from '../sealing.js';
import { guardedLookup, isPrivateAddress, literalAddress } from './addresses.js';
import { presentEndpoint, type WebhookEndpointRow } from './endpoints.js';
import { signatureHeader } from './signing.js';

export const RETRY_FOR_MS = 3 * 24 * 3600_000;
export const FIRST_RETRY_MS = 60_000;
export const MAX_RETRY_INTERVAL_MS = 6 * 3600_000;
/** Deliveries claimed and sent at once by a pass (a pass goes on until nothing is due). */
const BATCH = 10;
/** A claim outlasts an attempt by this much; if its instance dies, the delivery is due again after it. */
const LEASE_MARGIN_MS = 60_000;
export const USER_AGENT = 'Live-Interpretation-API-Webhooks/1.0';
export const ENDPOINT_DISABLED_EVENT = 'webhook_endpoint.disabled';

/** The wait before the next attempt after `failures` failed attempts: 1 min, doubling, at most 6 h. */
export const retryDelayMs = (failures: number) => Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, failures - 1), MAX_RETRY_INTERVAL_MS);

export type WebhookWorkerDeps = Pick<AppContext, 'db' | 'events' | 'logger' | 'secretsKey' | 'config' | 'now'>;

interface ClaimedDelivery {
  id: string;
  event_type: string;
  attempt_count: number;
  first_attempted_at: Date | null;
  body: string;
  endpoint_id: string;
  url: string;
  secret_sealed: string;
}

type Outcome = { statusCode: number } | { error: string };

export class WebhookWorker {
  /** The pass running or last run; the next one starts after it. */
  private running: Promise<unknown> = Promise.resolve();
  /** A pass asked for and not started yet: later asks join it, since it will see what they queued. */
  private queued: Promise<number> | null = null;
  private readonly stopping = new AbortController();

  constructor(private readonly app: WebhookWorkerDeps) {}

  /** Runs a pass after the current one (if any); resolves with the number of attempts it made. */
  tick(): Promise<number> {
    if (this.queued) return this.queued;
    const next = this.running.then(() => {
      this.queued = null;
      return this.pass();
    });
    this.queued = next;
    this.running = next.catch(() => undefined);
    return next;
  }

  /** A pass soon, without waiting for it (something became due). */
  nudge(): void {
    if (this.stopping.signal.aborted) return;
    this.tick().catch((err) => this.app.logger.error({ err }, 'webhooks: a delivery pass failed'));
  }

  /** Sends what is due now, and retries on a timer, until the returned function stops it. */
  start(): () => Promise<void> {
    const unsubscribe = this.app.events.subscribe((event) => {
      if (event.webhookDeliveries) this.nudge();
    });
    const timer = setInterval(() => this.nudge(), this.app.config.webhooks.pollIntervalMs);
    timer.unref();
    this.nudge();
    return async () => {
      clearInterval(timer);
      unsubscribe();
      // Attempts under way are dropped unrecorded: their claims lapse and they are sent again.
      this.stopping.abort();
      await this.running;
    };
  }

  private async pass(): Promise<number> {
    let attempted = 0;
    for (;;) {
      if (this.stopping.signal.aborted) return attempted;
      const claimed = await this.claim(this.app.now());
      await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
      attempted += claimed.length;
      if (claimed.length < BATCH) return attempted;
    }
  }

  private async claim(now: number): Promise<ClaimedDelivery[]> {
    const { db } = this.app;
    const leaseUntil = new Date(now + this.app.config.webhooks.timeoutMs + LEASE_MARGIN_MS);
    const claimed = await db.raw<{ rows: Array<{ id: string }> }>(
      `update webhook_deliveries set next_attempt_at = ?
        where id in (
          select d.id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
           where d.status = 'pending' and d.next_attempt_at <= ? and e.disabled_at is null
           order by d.next_attempt_at limit ? for update of d skip locked)
        returning id`,
      [leaseUntil, new Date(now), BATCH],
    );
    const ids = claimed.rows.map((row) => row.id);
    if (!ids.length) return [];
    // The event as it was stored: the bytes streams send are the bytes signed and sent here.
    return db('webhook_deliveries as d')
      .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .join('events as ev', 'ev.id', 'd.event_id')
      .whereIn('d.id', ids)
      .select(
        'd.id',
        'd.event_type',
        'd.attempt_count',
        'd.first_attempted_at',
        db.raw('ev.payload::text as body'),
        'e.id as endpoint_id',
        'e.url',
        'e.secret_sealed',
      );
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const now = this.app.now();
    const timestamp = Math.floor(now / 1000);
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      'Webhook-Id': delivery.id,
      'Webhook-Signature': signatureHeader(openText(delivery.secret_sealed, this.app.secretsKey), timestamp, delivery.body),
    };
    const outcome = await this.post(delivery.url, headers, delivery.body);
    if (this.stopping.signal.aborted) return;
    try {
      await this.record(delivery, now, outcome);
    } catch (err) {
      this.app.logger.error({ err, delivery_id: delivery.id }, 'webhooks: recording an attempt failed; it is sent again when its claim lapses');
    }
  }

  /** One POST, to the address that was checked, without following redirects; never throws. */
  private post(rawUrl: string, headers: Record<string, string>, body: string): Promise<Outcome> {
    const url = new URL(rawUrl);
    const { allowPrivateAddresses, timeoutMs } = this.app.config.webhooks;
    const literal = literalAddress(url.hostname);
    if (!allowPrivateAddresses && literal !== null && isPrivateAddress(literal)) {
      return Promise.resolve({ error: `${literal} is a private or local address; webhooks are not delivered there` });
    }
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), this.stopping.signal]);
    return new Promise<Outcome>((resolve) => {
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        agent: false,
        signal,
        ...(allowPrivateAddresses ? {} : { lookup: guardedLookup }),
      });
      request.on('response', (response) => {
        resolve({ statusCode: response.statusCode ?? 0 });
        // Only the status counts: the answer's body is not read.
        response.destroy();
      });
      request.on('error', (err: NodeJS.ErrnoException) => {
        const reason = signal.aborted && !this.stopping.signal.aborted ? `no answer within ${timeoutMs} ms` : err.code ? `${err.code}: ${err.message}` : err.message;
        resolve({ error: reason.slice(0, 500) });
      });
      request.end(body);
    });
  }

  private async record(delivery: ClaimedDelivery, now: number, outcome: Outcome): Promise<void> {
    const succeeded = 'statusCode' in outcome && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const at = new Date(now);
    const firstAttempt = delivery.first_attempted_at?.getTime() ?? now;
    const giveUpAt = firstAttempt + RETRY_FOR_MS;
    const failures = delivery.attempt_count + 1;
    await withEvents(serverMade(this.app), async (trx, emit) => {
      await trx('webhook_attempts').insert({
        delivery_id: delivery.id,
        attempted_at: at,
        status_code: 'statusCode' in outcome ? outcome.statusCode : null,
        error: 'error' in outcome ? outcome.error : null,
      });
      const update = succeeded
        ? { status: 'succeeded', next_attempt_at: null }
        : now >= giveUpAt
          ? { status: 'failed', next_attempt_at: null }
          : { status: 'pending', next_attempt_at: new Date(Math.min(now + retryDelayMs(failures), giveUpAt)) };
      await trx('webhook_deliveries')
        .where({ id: delivery.id })
        .update({ ...update, attempt_count: failures, first_attempted_at: new Date(firstAttempt) });
      if (succeeded) {
        await trx('webhook_endpoints').where({ id: delivery.endpoint_id }).whereNotNull('failing_since').update({ failing_since: null });
        return;
      }
      const [endpoint] = await trx<WebhookEndpointRow>('webhook_endpoints')
        .where({ id: delivery.endpoint_id })
        .update({ failing_since: trx.raw('coalesce(failing_since, ?)', [at]) })
        .returning('*');
      if (!endpoint || endpoint.disabled_at || now - endpoint.failing_since!.getTime() < RETRY_FOR_MS) return;
      const [disabled] = await trx<WebhookEndpointRow>('webhook_endpoints')
        .where({ id: endpoint.id })
        .update({ disabled_at: at, disabled_reason: 'failing' })
        .returning('*');
      await trx('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'pending' }).update({ status: 'failed', next_attempt_at: null });
      await emit({ orgId: disabled.org_id, mode: disabled.mode, type: ENDPOINT_DISABLED_EVENT, metadata: {}, data: presentEndpoint(disabled) });
      this.app.logger.warn({ endpoint_id: endpoint.id }, 'webhooks: endpoint disabled after three days of failed deliveries');
    });
  }
}
