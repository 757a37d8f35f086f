// Phone numbers an organization owns at Twilio, registered so that their callers are interpreted
// (DESIGN §13). Twilio posts each incoming call to the number's Voice URL (./inbound.ts answers it).
// A `pin` number lets a phone join a side of an open call with a 6-digit PIN: while the organization has
// one in a mode, every call created in that mode gets a PIN per side, shown once and kept only as a
// hash; a PIN is unique among the open calls of the organization and mode, and is erased with its call.
import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import type { Mode, Payer } from '../auth/principal.js';
import { findOwned, listOwned } from '../auth/owned.js';
import { errors } from '../errors.js';
import type { Metadata } from '../events/types.js';
import type { components } from '../generated/api.js';
import { hashSecret, newId } from '../lib/ids.js';
import { findTelephonyConnector } from '../telephony/connectors.js';
import type { Side } from './side.js';

export type PhoneNumberIn = components['schemas']['PhoneNumberIn'];
export type PhoneNumberOut = components['schemas']['PhoneNumberOut'];
export type Answering = PhoneNumberIn['mode'];

export interface PhoneNumberRow {
  id: string;
  org_id: string;
  mode: Mode;
  number: string;
  answering: Answering;
  agent_language: string;
  agent_name: string | null;
  customer_languages: string[] | null;
  metadata: Metadata;
  created_at: Date;
}

/** Where Twilio posts the number's incoming calls: what it signs, so it is built here only. */
export const voiceUrl = (publicBaseUrl: string, numberId: string) => `${publicBaseUrl}/twilio/voice/${numberId}`;
/** Where Twilio posts the status of the number's calls ("Call status changes"). */
export const inboundStatusUrl = (publicBaseUrl: string, numberId: string) => `${voiceUrl(publicBaseUrl, numberId)}/status`;

export function presentPhoneNumber(publicBaseUrl: string, row: PhoneNumberRow): PhoneNumberOut {
  return {
    id: row.id,
    number: row.number,
    mode: row.answering,
    agent_language: row.agent_language,
    agent_name: row.agent_name,
    customer_languages: row.customer_languages,
    metadata: row.metadata,
    voice_url: voiceUrl(publicBaseUrl, row.id),
    status_callback_url: inboundStatusUrl(publicBaseUrl, row.id),
    livemode: row.mode === 'live',
    created_at: row.created_at.toISOString(),
  };
}

export interface PhoneNumberDeps {
  db: Knex;
  secretsKey: Buffer;
  config: { publicBaseUrl: string };
}

export async function createPhoneNumber(deps: PhoneNumberDeps, payer: Payer, input: PhoneNumberIn): Promise<PhoneNumberOut> {
  if (!(await findTelephonyConnector(deps.db, deps.secretsKey, payer.orgId))) {
    throw errors.badRequest('the organization has no telephony connector; the operator sets one with PUT /admin/orgs/{org_id}/telephony');
  }
  const [row] = await deps
    .db<PhoneNumberRow>('phone_numbers')
    .insert({
      id: newId('pn'),
      org_id: payer.orgId,
      mode: payer.mode,
      number: input.number,
      answering: input.mode,
      agent_language: input.agent_language,
      agent_name: input.agent_name ?? null,
      customer_languages: (input.customer_languages ? JSON.stringify(input.customer_languages) : null) as never,
      metadata: JSON.stringify(input.metadata ?? {}) as never,
    })
    .onConflict(['org_id', 'mode', 'number'])
    .ignore()
    .returning('*');
  if (!row) throw errors.conflict(`the number ${input.number} is registered already in this mode; delete it first`);
  return presentPhoneNumber(deps.config.publicBaseUrl, row);
}

export async function listPhoneNumbers(deps: PhoneNumberDeps, payer: Payer, limit?: number): Promise<PhoneNumberOut[]> {
  const rows = await listOwned<PhoneNumberRow>(deps.db, 'phone_numbers', payer, { limit });
  return rows.map((row) => presentPhoneNumber(deps.config.publicBaseUrl, row));
}

export async function getPhoneNumber(deps: PhoneNumberDeps, payer: Payer, id: string): Promise<PhoneNumberOut> {
  return presentPhoneNumber(deps.config.publicBaseUrl, await findOwned<PhoneNumberRow>(deps.db, 'phone_numbers', payer, id, 'phone number'));
}

export async function deletePhoneNumber(db: Knex, payer: Payer, id: string): Promise<void> {
  const deleted = await db('phone_numbers').where({ id, org_id: payer.orgId, mode: payer.mode }).del();
  if (!deleted) throw errors.notFound('phone number');
}

/** A number by its id alone (Twilio's webhook names it by the path), whoever owns it. */
export const findPhoneNumberById = (db: Knex, id: string): Promise<PhoneNumberRow | undefined> =>
  db<PhoneNumberRow>('phone_numbers').where({ id }).first();

// ---- PINs ----------------------------------------------------------------------------------------

export const PIN_DIGITS = 6;

/** A PIN is hashed with its organization and mode: the same six digits elsewhere are another PIN. */
const pinHash = (orgId: string, mode: Mode, pin: string) => hashSecret(`pin:${orgId}:${mode}:${pin}`);

const newPin = () => String(randomInt(0, 10 ** PIN_DIGITS)).padStart(PIN_DIGITS, '0');

/** A collision with an open call's PIN draws again; this many draws all colliding means the space is full. */
const PIN_DRAWS = 20;

/**
 * A PIN for each side of a new call when the organization has a `pin` number in the call's mode (in the
 * transaction that creates the call); undefined otherwise.
 */
export async function issuePins(trx: Knex.Transaction, call: { id: string; org_id: string; mode: Mode }): Promise<Record<Side, string> | undefined> {
  const pinNumber = await trx('phone_numbers').where({ org_id: call.org_id, mode: call.mode, answering: 'pin' }).first('id');
  if (!pinNumber) return undefined;
  const pins = {} as Record<Side, string>;
  for (const side of ['agent', 'customer'] as const) {
    for (let draw = 0; ; draw++) {
      if (draw === PIN_DRAWS) throw errors.conflict('no free phone PIN: end some open calls first');
      const pin = newPin();
      const inserted = await trx('call_phone_pins')
        .insert({ call_id: call.id, side, org_id: call.org_id, mode: call.mode, pin_hash: pinHash(call.org_id, call.mode, pin) })
        .onConflict(['org_id', 'mode', 'pin_hash'])
        .ignore()
        .returning('side');
      if (inserted.length) {
        pins[side] = pin;
        break;
      }
    }
  }
  return pins;
}

/** The call and side a typed PIN opens, in the number's organization and mode; undefined for none. */
export async function findPin(db: Knex, number: PhoneNumberRow, pin: string): Promise<{ callId: string; side: Side } | undefined> {
  if (!new RegExp(`^[0-9]{${PIN_DIGITS}}$`).test(pin)) return undefined;
  const row = await db('call_phone_pins').where({ org_id: number.org_id, mode: number.mode, pin_hash: pinHash(number.org_id, number.mode, pin) }).first();
  return row ? { callId: row.call_id, side: row.side } : undefined;
}

/** A PIN dies with its call. */
export const erasePins = (db: Knex, callId: string) => db('call_phone_pins').where({ call_id: callId }).del();
