// Admission of a Twilio media stream, in two halves. Before the upgrade, by the path: the address is
// not guessing, the channel names a call that is open and ready. After Twilio's `start`, by its
// `token` parameter: a dialled leg's single-use token (claimed: it opens no second stream), or the
// side's own stream token (a bridge the integrator runs); then the side is present.
import type { Knex } from 'knex';
import type { EventBus } from '../../../../events/bus.js';
import { claimStreamToken } from '../../../phoneLegs.js';
import { markJoined, type CallRow } from '../../../calls.js';
import { parseChannelId, verifyMediaSecret } from '../../../join.js';
import type { Side } from '../../../side.js';
import type { Credential } from '../../endpoints.js';
import {
  admit,
  loadCall,
  notGuessing,
  notWhileClosing,
  refuse,
  requireOpen,
  requireReady,
  type AdmissionContext,
  type AdmissionStep,
  type Refused,
} from '../../admission.js';

export interface StreamAdmission extends AdmissionContext {
  channel: string;
  side?: Side;
}

const parseChannel: AdmissionStep<StreamAdmission> = (ctx) => {
  const channel = parseChannelId(ctx.channel);
  if (!channel) return refuse('unknown_call');
  ctx.callId = channel.callId;
  ctx.side = channel.side;
  return undefined;
};

const STEPS: ReadonlyArray<AdmissionStep<StreamAdmission>> = [
  notGuessing,
  notWhileClosing,
  parseChannel,
  loadCall,
  requireOpen,
  requireReady,
  notWhileClosing,
];

export async function admitChannel(ctx: StreamAdmission): Promise<{ call: CallRow; side: Side } | Refused> {
  const refusal = await admit(ctx, STEPS);
  return refusal ?? { call: ctx.call!, side: ctx.side! };
}

/** Dialled legs' tokens start so; anything else is taken for the side's stream token. */
const LEG_TOKEN_PREFIX = 'pst_';

/**
 * The `start` message's token: which credential it is, or null when it opens nothing. A valid token
 * marks the side present (call.joined).
 */
export async function admitToken(
  deps: { db: Knex; events: EventBus },
  call: CallRow,
  side: Side,
  token: string | null,
): Promise<Credential | null> {
  if (!token) return null;
  let credential: Credential | null = null;
  if (token.startsWith(LEG_TOKEN_PREFIX)) credential = (await claimStreamToken(deps.db, call.id, side, token)) ? 'phone' : null;
  else credential = verifyMediaSecret(call, side, 'stream', token) ? 'link' : null;
  if (credential) await markJoined(deps, call, side);
  return credential;
}
