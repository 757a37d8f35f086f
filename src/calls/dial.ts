// Dialling a phone into a call: the checks the document names, then the call placed through the
// organization's own Twilio account. Its TwiML connects a two-way media stream to this server with a
// single-use token bound to the call and side; its status comes back as signed callbacks. The leg is
// recorded only once Twilio accepted it, and a newer dial for the same side hangs up the older leg.
import type { Knex } from 'knex';
import { isLive, type Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import { newId, hashSecret, newSecret } from '../lib/ids.js';
import { fundedPayer } from '../money/index.js';
import {
  endLegs,
  hangUpLegs,
  statusCallbackUrl,
  twilioAccountOf,
  twilioRestFor,
  type PhoneLegRow,
  type TelephonyDeps,
} from './phoneLegs.js';
import { streamTwiml, TwilioRefused } from '../telephony/twilio.js';
import { assertOpen, type CallRow, type Side } from './calls.js';
import { channelId, isReady } from './join.js';

/** How long the phone rings before Twilio gives up (`no-answer`). */
export const RING_TIMEOUT_SECONDS = 30;
/** Where Twilio opens a side's media stream (./media/transports/twilio). */
export const TWILIO_STREAM_PATH_PREFIX = '/media/twilio/';

/** `wss://` (or `ws://` for an http base) URL of the side's Twilio media stream. */
export const twilioStreamUrl = (publicBaseUrl: string, callId: string, side: Side) =>
  `${publicBaseUrl.replace(/^http/, 'ws')}${TWILIO_STREAM_PATH_PREFIX}${channelId(callId, side)}`;

export async function dial(deps: TelephonyDeps, payer: Payer, call: CallRow, side: Side, to: string): Promise<{ twilio_call_sid: string }> {
  assertOpen(call);
  if (!isLive(payer)) throw errors.badRequest('phones cannot be dialled in test mode');
  const found = await twilioAccountOf(deps, payer.orgId);
  if (!found) {
    throw errors.badRequest('the organization has no telephony connector; the operator sets one with PUT /admin/orgs/{org_id}/telephony');
  }
  if (!isReady(call)) {
    throw errors.badRequest("the call's customer language is not known yet: a phone cannot choose one, so set it before dialling");
  }
  await fundedPayer(deps.db, payer);

  const legId = newId('leg');
  const token = newSecret('pst_');
  const rest = twilioRestFor(deps.config);
  let sid: string;
  try {
    sid = await rest.placeCall(found.account, {
      to,
      from: found.from,
      twiml: streamTwiml(twilioStreamUrl(deps.config.publicBaseUrl, call.id, side), token),
      statusCallback: statusCallbackUrl(deps.config.publicBaseUrl, legId),
      ringTimeoutSeconds: RING_TIMEOUT_SECONDS,
    });
  } catch (err) {
    if (err instanceof TwilioRefused) throw errors.badRequest(`Twilio refused the call: ${err.twilioMessage || err.message}`);
    throw errors.upstream((err as Error).message);
  }

  let replaced: PhoneLegRow[];
  try {
    replaced = await recordLeg(deps.db, { legId, call, side, to, sid, token });
  } catch (err) {
    // Nothing half-made: a phone ringing for a leg that was not recorded is hung up again.
    await hangUpLegs(deps, [{ id: legId, org_id: call.org_id, twilio_call_sid: sid } as PhoneLegRow]);
    throw err;
  }
  await hangUpLegs(deps, replaced);
  return { twilio_call_sid: sid };
}

export interface NewLeg {
  legId: string;
  call: CallRow;
  side: Side;
  /** The phone's number: the one dialled, or the caller's. */
  to: string;
  sid: string;
  token: string;
  /** A caller of one of the organization's numbers (./inbound.ts); default: dialled. */
  direction?: 'inbound' | 'outbound';
}

/** Records the accepted leg and ends the side's older ones (returned, to be hung up); 409 if the call ended meanwhile. */
export async function recordLeg(db: Knex, leg: NewLeg): Promise<PhoneLegRow[]> {
  return db.transaction(async (trx) => {
    const current = await trx<CallRow>('calls').where({ id: leg.call.id }).forUpdate().first();
    assertOpen(current!);
    const replaced = await endLegs(trx, leg.call.id, 'replaced', leg.side);
    await trx('phone_legs').insert({
      id: leg.legId,
      call_id: leg.call.id,
      org_id: leg.call.org_id,
      side: leg.side,
      to_number: leg.to,
      twilio_call_sid: leg.sid,
      stream_token_hash: hashSecret(leg.token),
      direction: leg.direction ?? 'outbound',
      // Twilio put the caller through: the phone is answered already.
      ...(leg.direction === 'inbound' ? { status: 'answered' } : {}),
    });
    return replaced;
  });
}
