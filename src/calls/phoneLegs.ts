// Phone legs: a phone dialled into a call through the organization's Twilio account. A row exists only
// for a leg Twilio accepted; it holds the hash of the single-use token the leg's media stream presents,
// and the leg's state from Twilio's status callbacks. Ending the call hangs its phones up; the phone
// hanging up leaves the call open for the other side.
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import { serverMade, withEvents } from '../events/log.js';
import type { EventBus } from '../events/bus.js';
import type { EventData } from '../events/types.js';
import { hashSecret } from '../lib/ids.js';
import { callEvent, findCallById, presentCall, type CallRow, type Side } from './calls.js';
import { findTelephonyConnector } from '../telephony/connectors.js';
import { erasePins } from './phoneNumbers.js';
import { TwilioRest, validTwilioSignature, type TwilioAccount } from '../telephony/twilio.js';

export interface PhoneLegRow {
  id: string;
  call_id: string;
  org_id: string;
  side: Side;
  to_number: string;
  twilio_call_sid: string;
  stream_token_hash: string;
  status: 'dialing' | 'ringing' | 'answered' | 'completed';
  /** outbound: dialled through the API; inbound: a caller of one of the organization's numbers. */
  direction: 'outbound' | 'inbound';
  stream_started_at: Date | null;
  ended_at: Date | null;
  end_reason: string | null;
  created_at: Date;
}

export interface TelephonyDeps {
  db: Knex;
  events: EventBus;
  config: Pick<Config, 'publicBaseUrl' | 'engines'>;
  secretsKey: Buffer;
  logger: Logger;
}

export const twilioRestFor = (config: Pick<Config, 'engines'>) => new TwilioRest({ baseUrl: config.engines.twilioApiBaseUrl });

/** Where Twilio posts a leg's status: the URL it signs, so it is built here only. */
export const statusCallbackUrl = (publicBaseUrl: string, legId: string) => `${publicBaseUrl}/twilio/status/${legId}`;

/** The organization's Twilio account, auth token opened; undefined without a connector. */
export async function twilioAccountOf(deps: Pick<TelephonyDeps, 'db' | 'secretsKey'>, orgId: string) {
  const connector = await findTelephonyConnector(deps.db, deps.secretsKey, orgId);
  if (!connector) return undefined;
  return { account: { accountSid: connector.account_sid, authToken: connector.auth_token } satisfies TwilioAccount, from: connector.from_number };
}

/** Hangs up legs through Twilio; a failure is logged (without the request) and does not stop the others. */
export async function hangUpLegs(deps: TelephonyDeps, legs: PhoneLegRow[]): Promise<void> {
  if (!legs.length) return;
  const found = await twilioAccountOf(deps, legs[0].org_id);
  if (!found) return;
  const rest = twilioRestFor(deps.config);
  await Promise.all(
    legs.map((leg) =>
      rest.hangUp(found.account, leg.twilio_call_sid).catch((err: Error) =>
        deps.logger.warn({ leg_id: leg.id, twilio_call_sid: leg.twilio_call_sid, reason: err.message }, 'telephony: hanging up a phone leg failed'),
      ),
    ),
  );
}

/** Marks the call's open legs (of one side, or all) ended; returns them. */
export async function endLegs(db: Knex, callId: string, reason: string, side?: Side): Promise<PhoneLegRow[]> {
  const query = db<PhoneLegRow>('phone_legs').where({ call_id: callId }).whereNull('ended_at');
  if (side) query.andWhere({ side });
  return query.update({ ended_at: db.fn.now() as never, end_reason: reason }).returning('*');
}

/**
 * The leg whose single-use stream token this is, for this call and side, claimed: the token opens no
 * other stream. Undefined for an unknown, used or ended token.
 */
export async function claimStreamToken(db: Knex, callId: string, side: Side, token: string): Promise<PhoneLegRow | undefined> {
  const [leg] = await db<PhoneLegRow>('phone_legs')
    .where({ stream_token_hash: hashSecret(token), call_id: callId, side })
    .whereNull('stream_started_at')
    .whereNull('ended_at')
    .update({ stream_started_at: db.fn.now() as never })
    .returning('*');
  return leg;
}

export const findLeg = (db: Knex, legId: string) => db<PhoneLegRow>('phone_legs').where({ id: legId }).first();

/** Ending a call hangs up every phone still in it (the API's end, or the agent's hang-up); its phone PINs die with it. */
export function hangUpPhonesWhenCallsEnd(deps: TelephonyDeps, track: (work: Promise<unknown>) => void): () => void {
  return deps.events.subscribe((event) => {
    if (event.signal?.type !== 'ended' || !event.callId) return;
    const callId = event.callId;
    track(
      (async () => {
        await erasePins(deps.db, callId);
        await hangUpLegs(deps, await endLegs(deps.db, callId, 'call_ended'));
      })().catch((err) =>
        deps.logger.error({ err, call_id: callId }, 'telephony: hanging up the phones of an ended call failed'),
      ),
    );
  });
}

// ---- status callbacks ----------------------------------------------------------------------------

const LEG_STATES: ReadonlyArray<PhoneLegRow['status']> = ['dialing', 'ringing', 'answered', 'completed'];

type EndReason = EventData<'call.phone.completed'>['reason'];
type LegProgress =
  | { status: 'ringing'; event: 'call.phone.ringing' }
  | { status: 'answered'; event: 'call.phone.answered' }
  | { status: 'completed'; event: 'call.phone.completed'; reason: EndReason };

const ended = (reason: EndReason): LegProgress => ({ status: 'completed', event: 'call.phone.completed', reason });

/** Twilio's CallStatus values, as the leg's state and the event they become. */
const STATUS: Record<string, LegProgress | undefined> = {
  ringing: { status: 'ringing', event: 'call.phone.ringing' },
  'in-progress': { status: 'answered', event: 'call.phone.answered' },
  completed: ended('completed'),
  busy: ended('busy'),
  'no-answer': ended('no-answer'),
  failed: ended('failed'),
  canceled: ended('canceled'),
};

/**
 * A status callback of leg `legId`: it must be signed by the organization's auth token over the URL as
 * configured by PUBLIC_BASE_URL (403 otherwise, also for an unknown leg: nothing is revealed).
 */
export async function applyStatusCallback(deps: TelephonyDeps, legId: string, signature: string, params: Record<string, string>): Promise<void> {
  const leg = await findLeg(deps.db, legId);
  const found = leg && (await twilioAccountOf(deps, leg.org_id));
  const url = statusCallbackUrl(deps.config.publicBaseUrl, legId);
  if (!leg || !found || !validTwilioSignature(found.account.authToken, signature, url, params) || params.CallSid !== leg.twilio_call_sid) {
    throw errors.invalidTwilioSignature();
  }
  await advanceLeg(deps, leg, params.CallStatus ?? '');
}

/** Twilio's `CallStatus` of a leg: a new state becomes an event carrying the call's metadata; a repeated one changes nothing. */
export async function advanceLeg(deps: Pick<TelephonyDeps, 'db' | 'events'>, leg: PhoneLegRow, callStatus: string): Promise<void> {
  const next = STATUS[callStatus];
  if (!next) return;
  await withEvents(serverMade(deps), async (trx, emit) => {
    const changes: Record<string, unknown> = { status: next.status };
    // A leg this server already ended (replaced, call ended) keeps its own reason and time.
    if (next.status === 'completed') {
      Object.assign(changes, { ended_at: trx.raw('coalesce(ended_at, now())'), end_reason: trx.raw('coalesce(end_reason, ?)', [callStatus]) });
    }
    // Callbacks may arrive out of order or twice: a leg's state only moves forward.
    const [updated] = await trx<PhoneLegRow>('phone_legs')
      .where({ id: leg.id })
      .whereIn('status', LEG_STATES.slice(0, LEG_STATES.indexOf(next.status)))
      .update(changes as never)
      .returning('*');
    if (!updated) return;
    const call = (await findCallById(trx, leg.call_id)) as CallRow;
    const data = { ...presentCall(call), side: leg.side, twilio_call_sid: leg.twilio_call_sid };
    await emit(next.event === 'call.phone.completed' ? callEvent(call, next.event, { ...data, reason: next.reason }) : callEvent(call, next.event, data));
  });
}
