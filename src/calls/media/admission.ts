// Who may open a media endpoint, decided in small named steps (as node-oidc-provider runs an endpoint
// as a list of small actions). Each step either passes or refuses with a reason; each transport says
// the reason in its own words (an HTTP status before a WebSocket upgrade, an AudioSocket error code).
import type { FailedAttempts } from '../../ratelimit/failedAttempts.js';
import type { CallRow } from '../calls.js';
import type { CallStore } from './callStore.js';
import { isReady } from '../join.js';

export type RefusalReason =
  | 'too_many_failed_attempts'
  | 'no_endpoint'
  | 'bad_source_id'
  | 'unknown_call'
  | 'unknown_line'
  | 'bad_token'
  | 'bad_unlock'
  | 'call_ended'
  | 'not_ready'
  | 'too_many_sockets'
  | 'shutting_down'
  /** The client went away while it was being admitted: nobody to answer. */
  | 'client_gone';

export interface Refused {
  refused: RefusalReason;
  /** Seconds until a refusal for too many attempts lifts. */
  retryAfterSeconds?: number;
}

export const refuse = (reason: RefusalReason, retryAfterSeconds?: number): Refused =>
  retryAfterSeconds === undefined ? { refused: reason } : { refused: reason, retryAfterSeconds };

/**
 * What every admission knows: the calls, whether the plane is shutting down, where the connection
 * comes from (guessing is counted per address), and, once found, the call.
 */
export interface AdmissionContext {
  calls: CallStore;
  closing(): boolean;
  address: string;
  failedAttempts: FailedAttempts;
  callId?: string;
  call?: CallRow;
}

export type AdmissionStep<C extends AdmissionContext> = (ctx: C) => Refused | undefined | Promise<Refused | undefined>;

/** Runs the steps in order; the first refusal wins. */
export async function admit<C extends AdmissionContext>(ctx: C, steps: ReadonlyArray<AdmissionStep<C>>): Promise<Refused | null> {
  for (const step of steps) {
    const refusal = await step(ctx);
    if (refusal) return refusal;
  }
  return null;
}

// ---- steps every transport uses ------------------------------------------------------------------

/** An address that guessed too often is refused before anything is looked up. */
export const notGuessing: AdmissionStep<AdmissionContext> = async (ctx) => {
  const wait = await ctx.failedAttempts.retryAfter(ctx.address);
  return wait ? refuse('too_many_failed_attempts', wait) : undefined;
};

export const notWhileClosing: AdmissionStep<AdmissionContext> = (ctx) => (ctx.closing() ? refuse('shutting_down') : undefined);

/** Loads the call named by `ctx.callId`. */
export const loadCall: AdmissionStep<AdmissionContext> = async (ctx) => {
  ctx.call = await ctx.calls.findCall(ctx.callId!);
  return ctx.call ? undefined : refuse('unknown_call');
};

export const requireOpen: AdmissionStep<AdmissionContext> = (ctx) => (ctx.call!.status === 'open' ? undefined : refuse('call_ended'));

/** Both languages known: the call can carry audio. */
export const requireReady: AdmissionStep<AdmissionContext> = (ctx) => (isReady(ctx.call!) ? undefined : refuse('not_ready'));
