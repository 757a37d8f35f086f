// Webhook endpoints: where an organization wants its events of one mode POSTed, which types, and the
// secret they are signed with. The secret is shown when it is made (creation, rotation) and kept sealed:
// it must stay usable for signing, so it cannot be hashed. A rotation may keep the replaced secret
// signing beside the new one for up to a day, so receivers can change secrets without missing a
// delivery; only the latest replaced secret is kept, and it is erased once its time is over.
import type { Knex } from 'knex';
import type { Mode, Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import type { components } from '../generated/api.js';
import { newId } from '../lib/ids.js';
import { sealText } from '../secrets/sealing.js';
import { findOwned, listOwned } from '../auth/owned.js';
import { isLocalName, isPrivateAddress, literalAddress } from './addresses.js';
import { newWebhookSecret } from './signing.js';
import type { Config } from '../config.js';

/** An event type an endpoint asks for, or `*` (the contract's list). */
export type WebhookEventType = components['schemas']['WebhookEventType'];

export interface WebhookEndpointRow {
  id: string;
  org_id: string;
  mode: Mode;
  url: string;
  description: string | null;
  enabled_events: WebhookEventType[];
  secret_sealed: string;
  created_at: Date;
  disabled_at: Date | null;
  disabled_reason: 'manual' | 'failing' | null;
  failing_since: Date | null;
  /** Failed attempts since the last success (src/webhooks/circuit.ts). */
  consecutive_failures: number;
  /** Its due deliveries wait until then; then one probe. */
  circuit_open_until: Date | null;
  /** The secret the last rotation replaced, while it still signs (with previous_secret_expires_at). */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

export interface WebhookEndpointOut {
  id: string;
  url: string;
  description: string | null;
  enabled_events: WebhookEventType[];
  disabled: boolean;
  disabled_reason: 'manual' | 'failing' | null;
  disabled_at: string | null;
  livemode: boolean;
  created_at: string;
  previous_secret_expires_at: string | null;
}

/** Each event is POSTed once per matching endpoint: the number an organization may have per mode is bounded. */
export const MAX_ENDPOINTS_PER_MODE = 16;

export type WebhookDeps = { db: Knex; config: Config; secretsKey: Buffer; now: () => number };

/** The secrets that sign a delivery sent at `now`: the current one, then the replaced one while it lasts. */
export function sealedSigningSecrets(row: Pick<WebhookEndpointRow, 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'>, now: number): string[] {
  return previousSecretLasts(row, now) ? [row.secret_sealed, row.previous_secret_sealed!] : [row.secret_sealed];
}

const previousSecretLasts = (row: Pick<WebhookEndpointRow, 'previous_secret_expires_at'>, now: number) =>
  row.previous_secret_expires_at !== null && row.previous_secret_expires_at.getTime() > now;

export function presentEndpoint(row: WebhookEndpointRow, now: number): WebhookEndpointOut {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    enabled_events: row.enabled_events,
    disabled: row.disabled_at !== null,
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at ? row.disabled_at.toISOString() : null,
    livemode: row.mode === 'live',
    created_at: row.created_at.toISOString(),
    previous_secret_expires_at: previousSecretLasts(row, now) ? row.previous_secret_expires_at!.toISOString() : null,
  };
}

const urlProblem = (msg: string, type: string) => errors.invalid([{ loc: ['body', 'url'], msg, type }]);

/**
 * Refuses a URL that is not absolute http(s), carries credentials, is plain http in live mode, or
 * names this machine or a private address, unless private addresses are allowed. A name is resolved
 * only when delivering (src/webhooks/addresses.ts), where it counts.
 */
export function checkEndpointUrl(raw: string, mode: Mode, allowPrivate: boolean): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw urlProblem('must be an absolute http or https URL', 'url_invalid');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw urlProblem('must be an absolute http or https URL', 'url_invalid');
  if (url.username || url.password) throw urlProblem('must not carry a user name or password', 'url_credentials');
  if (url.hash) throw urlProblem('must not have a fragment', 'url_fragment');
  if (allowPrivate) return;
  if (mode === 'live' && url.protocol !== 'https:') throw urlProblem('a live-mode endpoint must use https', 'url_https_required');
  const address = literalAddress(url.hostname);
  if (isLocalName(url.hostname) || (address !== null && isPrivateAddress(address))) {
    throw urlProblem('is a loopback, private or link-local address; webhooks are only delivered to public addresses', 'url_private_address');
  }
}

/** Given event types, `*` alone, without repeats. */
function normalisedEvents(events: WebhookEventType[]): WebhookEventType[] {
  if (events.includes('*') && events.length > 1) {
    throw errors.invalid([{ loc: ['body', 'enabled_events'], msg: "'*' (every event) stands alone", type: 'wildcard_alone' }]);
  }
  return [...new Set(events)];
}

export const findEndpoint = (db: Knex, payer: Payer, id: string, lock = false) =>
  findOwned<WebhookEndpointRow>(db, 'webhook_endpoints', payer, id, 'webhook endpoint', lock);

export interface NewEndpoint {
  url: string;
  enabled_events: WebhookEventType[];
  description?: string | null;
}

export async function createEndpoint(
  deps: WebhookDeps,
  payer: Payer,
  input: NewEndpoint,
): Promise<WebhookEndpointOut & { secret: string }> {
  checkEndpointUrl(input.url, payer.mode, deps.config.webhooks.allowPrivateAddresses);
  const enabledEvents = normalisedEvents(input.enabled_events);
  const secret = newWebhookSecret();
  const row = await deps.db.transaction(async (trx) => {
    // Creations for one organization and mode one after another: two at once must not both see 15.
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`webhook_endpoints ${payer.orgId} ${payer.mode}`]);
    const [{ count }] = await trx('webhook_endpoints').where({ org_id: payer.orgId, mode: payer.mode }).count<{ count: string | number }[]>({ count: '*' });
    if (Number(count) >= MAX_ENDPOINTS_PER_MODE) {
      throw errors.conflict(`an organization may have at most ${MAX_ENDPOINTS_PER_MODE} webhook endpoints per mode; delete one first`);
    }
    const [created] = await trx<WebhookEndpointRow>('webhook_endpoints')
      .insert({
        id: newId('we'),
        org_id: payer.orgId,
        mode: payer.mode,
        url: input.url,
        description: input.description ?? null,
        enabled_events: enabledEvents,
        secret_sealed: sealText(secret, deps.secretsKey),
      })
      .returning('*');
    return created;
  });
  return { ...presentEndpoint(row, deps.now()), secret };
}

export async function listEndpoints(deps: WebhookDeps, payer: Payer, limit?: number): Promise<WebhookEndpointOut[]> {
  const now = deps.now();
  return (await listOwned<WebhookEndpointRow>(deps.db, 'webhook_endpoints', payer, { limit })).map((row) => presentEndpoint(row, now));
}

export async function getEndpoint(deps: WebhookDeps, payer: Payer, id: string): Promise<WebhookEndpointOut> {
  return presentEndpoint(await findEndpoint(deps.db, payer, id), deps.now());
}

export interface EndpointChange {
  url?: string;
  enabled_events?: WebhookEventType[];
  description?: string | null;
  disabled?: boolean;
}

export async function updateEndpoint(deps: WebhookDeps, payer: Payer, id: string, change: EndpointChange): Promise<WebhookEndpointOut> {
  if (change.url !== undefined) checkEndpointUrl(change.url, payer.mode, deps.config.webhooks.allowPrivateAddresses);
  const enabledEvents = change.enabled_events && normalisedEvents(change.enabled_events);
  const row = await deps.db.transaction(async (trx) => {
    const current = await findEndpoint(trx, payer, id, true);
    const update: Partial<WebhookEndpointRow> = {};
    // Another URL is another receiver: the old one's failures say nothing about it.
    if (change.url !== undefined && change.url !== current.url) Object.assign(update, { url: change.url, consecutive_failures: 0, circuit_open_until: null });
    if (enabledEvents) update.enabled_events = enabledEvents;
    if (change.description !== undefined) update.description = change.description;
    if (change.disabled === true && current.disabled_at === null) Object.assign(update, { disabled_at: new Date(deps.now()), disabled_reason: 'manual' });
    // Enabled again: its failures so far no longer count towards disabling or pausing it.
    if (change.disabled === false) {
      Object.assign(update, { disabled_at: null, disabled_reason: null, failing_since: null, consecutive_failures: 0, circuit_open_until: null });
    }
    if (!Object.keys(update).length) return current;
    const [updated] = await trx<WebhookEndpointRow>('webhook_endpoints').where({ id }).update(update).returning('*');
    return updated;
  });
  return presentEndpoint(row, deps.now());
}

export async function deleteEndpoint(db: Knex, payer: Payer, id: string): Promise<void> {
  const deleted = await db('webhook_endpoints').where({ id, org_id: payer.orgId, mode: payer.mode }).del();
  if (!deleted) throw errors.notFound('webhook endpoint');
}

/**
 * A new secret, signing every attempt from now on. With `overlapSeconds` the replaced secret signs too
 * (its signature second) until then; a rotation during an overlap keeps only the secret it replaces.
 */
export async function rotateSecret(deps: WebhookDeps, payer: Payer, id: string, overlapSeconds = 0): Promise<WebhookEndpointOut & { secret: string }> {
  const secret = newWebhookSecret();
  const now = deps.now();
  const [row]: WebhookEndpointRow[] = await deps
    .db('webhook_endpoints')
    .where({ id, org_id: payer.orgId, mode: payer.mode })
    .update({
      secret_sealed: sealText(secret, deps.secretsKey),
      // The right-hand side reads the row as it was: the secret being replaced.
      previous_secret_sealed: overlapSeconds > 0 ? deps.db.ref('secret_sealed') : null,
      previous_secret_expires_at: overlapSeconds > 0 ? new Date(now + overlapSeconds * 1000) : null,
    })
    .returning('*');
  if (!row) throw errors.notFound('webhook endpoint');
  return { ...presentEndpoint(row, now), secret };
}

/** Erases replaced secrets whose overlap is over (housekeeping); returns how many. */
export async function forgetExpiredSecrets(db: Knex, now: number): Promise<number> {
  return db('webhook_endpoints')
    .where('previous_secret_expires_at', '<=', new Date(now))
    .update({ previous_secret_sealed: null, previous_secret_expires_at: null });
}
