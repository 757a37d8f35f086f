// Sends queued webhook deliveries. Every attempt runs on its own: a claim (src/webhooks/claims.ts)
// leases due deliveries into this process's free slots, fairly across organizations and within the
// bounds per endpoint and per organization, and claims again whenever a slot frees; an endpoint that
// hangs holds only its own slots until its attempts time out. Each attempt POSTs the signed event and
// records what happened: 2xx succeeds; anything else is retried with exponential backoff until three
// days after the first attempt, then the delivery fails. An endpoint whose deliveries have failed for
// three days without a success is disabled, with an event saying so; failures in a row pause it
// (src/webhooks/circuit.ts).
//
// Claims happen when an event queued deliveries (at once), on a timer (retries), when an attempt ends,
// and when a test calls `tick()` after moving the injected clock.
import { serverMade, withEvents } from '../events/log.js';
import { openText } from '../secrets/sealing.js';
import { circuitOpenUntil } from './circuit.js';
import { claimDueDeliveries, type ClaimedDelivery } from './claims.js';
import { presentEndpoint, sealedSigningSecrets, type WebhookEndpointRow } from './endpoints.js';
import { postWebhook, type Outcome } from './sending.js';
import { signatureHeader } from './signing.js';
import type { Config } from '../config.js';
import type { EventBus } from '../events/bus.js';
import type { Knex } from 'knex';
import type { Logger } from 'pino';

export const RETRY_FOR_MS = 3 * 24 * 3600_000;
export const FIRST_RETRY_MS = 60_000;
export const MAX_RETRY_INTERVAL_MS = 6 * 3600_000;
/** A claim outlasts an attempt by this much; if its instance dies, the delivery is due again after it. */
const LEASE_MARGIN_MS = 60_000;
export const USER_AGENT = 'Live-Interpretation-API-Webhooks/1.0';
export const ENDPOINT_DISABLED_EVENT = 'webhook_endpoint.disabled';

/** The wait before the next attempt after `failures` failed attempts: 1 min, doubling, at most 6 h. */
export const retryDelayMs = (failures: number) => Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, failures - 1), MAX_RETRY_INTERVAL_MS);

export type WebhookWorkerDeps = { db: Knex; events: EventBus; logger: Logger; secretsKey: Buffer; config: Config; now: () => number };

export class WebhookWorker {
  /** The attempts under way in this process, each holding one of its slots. */
  private readonly inFlight = new Set<Promise<void>>();
  /** The claim under way: one at a time in a process. */
  private claiming: Promise<void> | null = null;
  /** Asked to claim while a claim ran: it may have missed what became due meanwhile, so claim again. */
  private claimAgain = false;
  private idleWaiters: Array<() => void> = [];
  private readonly stopping = new AbortController();

  constructor(private readonly app: WebhookWorkerDeps) {}

  /** Claims what is due into the free slots soon, without waiting (something became due, or a slot freed). */
  nudge(): void {
    if (this.stopping.signal.aborted) return this.settle();
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.fillSlots()
      .catch((err) => this.app.logger.error({ err }, 'webhooks: claiming due deliveries failed'))
      .finally(() => {
        this.claiming = null;
        if (this.claimAgain) this.nudge();
        else this.settle();
      });
  }

  /** Claims what is due now; resolves once this process has no attempt under way and nothing more it may claim. */
  tick(): Promise<void> {
    this.nudge();
    return this.idle();
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
      await this.idle();
    };
  }

  private idle(): Promise<void> {
    if (!this.claiming && !this.inFlight.size) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private settle(): void {
    if (this.claiming || this.inFlight.size) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Claims until the slots are full or nothing more may go now. */
  private async fillSlots(): Promise<void> {
    const { concurrency, perOrganization, perEndpoint, timeoutMs } = this.app.config.webhooks;
    for (;;) {
      this.claimAgain = false;
      const slots = concurrency - this.inFlight.size;
      if (slots <= 0 || this.stopping.signal.aborted) return;
      const now = this.app.now();
      const claimed = await claimDueDeliveries(this.app.db, now, now + timeoutMs + LEASE_MARGIN_MS, { slots, perOrganization, perEndpoint });
      for (const delivery of claimed) this.launch(delivery);
      if (claimed.length < slots) return;
    }
  }

  private launch(delivery: ClaimedDelivery): void {
    const attempt = this.attempt(delivery)
      .catch((err) => this.app.logger.error({ err, delivery_id: delivery.id }, 'webhooks: an attempt failed; it is sent again when its claim lapses'))
      .finally(() => {
        this.inFlight.delete(attempt);
        // A slot freed, and room for the endpoint and its organization.
        this.nudge();
      });
    this.inFlight.add(attempt);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const now = this.app.now();
    const timestamp = Math.floor(now / 1000);
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      'Webhook-Id': delivery.id,
      'Webhook-Signature': signatureHeader(
        sealedSigningSecrets(delivery, now).map((sealed) => openText(sealed, this.app.secretsKey)),
        timestamp,
        delivery.body,
      ),
    };
    const { timeoutMs, allowPrivateAddresses } = this.app.config.webhooks;
    const outcome = await postWebhook(delivery.url, headers, delivery.body, { timeoutMs, allowPrivateAddresses, stopping: this.stopping.signal });
    if (this.stopping.signal.aborted) return;
    try {
      await this.record(delivery, now, outcome);
    } catch (err) {
      this.app.logger.error({ err, delivery_id: delivery.id }, 'webhooks: recording an attempt failed; it is sent again when its claim lapses');
    }
  }

  private async record(delivery: ClaimedDelivery, now: number, outcome: Outcome): Promise<void> {
    const succeeded = 'statusCode' in outcome && outcome.statusCode >= 200 && outcome.statusCode < 300;
    const at = new Date(now);
    const firstAttempt = delivery.first_attempted_at?.getTime() ?? now;
    const giveUpAt = firstAttempt + RETRY_FOR_MS;
    const failures = delivery.attempt_count + 1;
    await withEvents(serverMade(this.app), async (trx, emit) => {
      // The endpoint first, as deleting it locks it before its deliveries: the same order, no deadlock.
      // Deleted while the attempt was in flight: its deliveries went with it, and there is nothing to record.
      const [endpoint] = await trx<WebhookEndpointRow>('webhook_endpoints')
        .where({ id: delivery.endpoint_id })
        .update(
          succeeded
            ? { failing_since: null, consecutive_failures: 0, circuit_open_until: null }
            : { failing_since: trx.raw('coalesce(failing_since, ?)', [at]), consecutive_failures: trx.raw('consecutive_failures + 1') },
        )
        .returning('*');
      if (!endpoint) return;
      const update = succeeded
        ? { status: 'succeeded', next_attempt_at: null }
        : now >= giveUpAt
          ? { status: 'failed', next_attempt_at: null }
          : { status: 'pending', next_attempt_at: new Date(Math.min(now + retryDelayMs(failures), giveUpAt)) };
      const [stored] = await trx('webhook_deliveries')
        .where({ id: delivery.id })
        .update({ ...update, attempt_count: failures, first_attempted_at: new Date(firstAttempt), lease_expires_at: null })
        .returning('id');
      // Erased meanwhile with its event (retention).
      if (!stored) return;
      await trx('webhook_attempts').insert({
        delivery_id: delivery.id,
        attempted_at: at,
        status_code: 'statusCode' in outcome ? outcome.statusCode : null,
        error: 'error' in outcome ? outcome.error : null,
      });
      if (succeeded) return;
      const pausedUntil = circuitOpenUntil(endpoint.consecutive_failures, now);
      if (pausedUntil) await trx('webhook_endpoints').where({ id: endpoint.id }).update({ circuit_open_until: pausedUntil });
      if (endpoint.disabled_at || now - endpoint.failing_since!.getTime() < RETRY_FOR_MS) return;
      const [disabled] = await trx<WebhookEndpointRow>('webhook_endpoints')
        .where({ id: endpoint.id })
        .update({ disabled_at: at, disabled_reason: 'failing' })
        .returning('*');
      await trx('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'pending' }).update({ status: 'failed', next_attempt_at: null });
      await emit({ orgId: disabled.org_id, mode: disabled.mode, type: ENDPOINT_DISABLED_EVENT, metadata: {}, data: presentEndpoint(disabled, now) });
      this.app.logger.warn({ endpoint_id: endpoint.id }, 'webhooks: endpoint disabled after three days of failed deliveries');
    });
  }
}
