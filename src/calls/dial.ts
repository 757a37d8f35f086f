// Dialling a phone into a call: the checks the document names. The Twilio leg (outbound call with a
// two-way media stream) is the next capability; until then a call that passes the checks gets 501.
import type { Knex } from 'knex';
import { isLive, type Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import { fundedPayer } from '../money/index.js';
import { assertOpen, type CallRow, type Side } from './calls.js';

export async function dial(app: { db: Knex }, payer: Payer, call: CallRow, _side: Side, _to: string): Promise<never> {
  assertOpen(call);
  if (!isLive(payer)) throw errors.badRequest('phones cannot be dialled in test mode');
  const connector = await app.db('telephony_connectors').where({ org_id: payer.orgId }).first();
  if (!connector) {
    throw errors.badRequest('the organization has no telephony connector; the operator sets one with PUT /admin/orgs/{org_id}/telephony');
  }
  await fundedPayer(app.db, payer);
  throw errors.notImplemented('dialCall (the telephony leg)');
}
