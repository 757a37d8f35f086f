// Admission of a PBX line, step by step: the address is not guessing, the UUID is a call's current
// agent or customer line, the call is open and ready.
import type { Knex } from 'knex';
import { findCallByLine } from '../../../calls.js';
import type { Side } from '../../../side.js';
import {
  admit,
  notGuessing,
  notWhileClosing,
  refuse,
  requireOpen,
  requireReady,
  type AdmissionContext,
  type AdmissionStep,
  type Refused,
} from '../../admission.js';

export interface LineAdmission extends AdmissionContext {
  /** Lines are looked up by their id. */
  db: Knex;
  lineId: string;
  side?: Side;
}

/** The call whose current line this is; an unknown id is a guess and counts against the address. */
const loadLine: AdmissionStep<LineAdmission> = async (ctx) => {
  const found = await findCallByLine(ctx.db, ctx.lineId);
  if (!found) {
    await ctx.failedAttempts.record(ctx.address);
    return refuse('unknown_line');
  }
  ctx.call = found.call;
  ctx.side = found.side;
  return undefined;
};

const STEPS: ReadonlyArray<AdmissionStep<LineAdmission>> = [
  notWhileClosing,
  notGuessing,
  loadLine,
  requireOpen,
  requireReady,
  notWhileClosing,
];

export async function admitLine(ctx: LineAdmission): Promise<{ side: Side } | Refused> {
  const refusal = await admit(ctx, STEPS);
  return refusal ?? { side: ctx.side! };
}
