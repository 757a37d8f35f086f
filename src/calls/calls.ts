// Calls: rows, what the API shows of them, and the state table of the document (open -> ended).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Mode, Payer } from '../auth/principal.js';
import { errors } from '../errors.js';
import { serverMade, withEvents } from '../events/log.js';
import { newEvent, type CallSignal, type EventData, type EventType, type Metadata, type NewEvent } from '../events/types.js';
import { hashSecret, newId, newSecret } from '../lib/ids.js';
import { fundedPayer } from '../money/index.js';
import { DEFAULT_AGENT_NAME } from '../sessions/sessions.js';
import { findOwned, listOwned } from '../auth/owned.js';
import { issuePins } from './phoneNumbers.js';

import { otherSide, type Side } from './side.js';
import type { Config } from '../config.js';
import type { EventBus } from '../events/bus.js';
import type { MediaStatsSnapshot } from './mediaStats.js';
import { callStats, type CallStats, type LiveCallStats } from './callStats.js';

export { otherSide, type Side };

export interface CallRow {
  id: string;
  org_id: string;
  mode: Mode;
  status: 'open' | 'ended';
  agent_language: string;
  agent_name: string;
  customer_language: string | null;
  customer_name: string | null;
  external_id: string | null;
  metadata: Metadata;
  video: boolean;
  support_session_id: string | null;
  agent_key_hash: string;
  customer_key_hash: string;
  agent_joined_at: Date | null;
  customer_joined_at: Date | null;
  agent_line_id: string | null;
  customer_line_id: string | null;
  /** Whether utterances are kept (./transcripts.ts): the call's `transcript` and its organization's setting when it was created. */
  transcript: boolean;
  retention_days: number | null;
  transcript_ready_at: Date | null;
  /** What the call's rooms counted (./mediaStats.ts); null before its first room closed. */
  media_stats: MediaStatsSnapshot | null;
  created_at: Date;
  ended_at: Date | null;
}

export interface CallOut {
  id: string;
  status: 'open' | 'ended';
  agent_language: string;
  agent_name: string;
  customer_language: string | null;
  customer_name: string | null;
  external_id: string | null;
  metadata: Metadata;
  video: boolean;
  livemode: boolean;
  support_session_id: string | null;
  created_at: string;
  ended_at: string | null;
}

export type CallDeps = { db: Knex; events: EventBus; actingApp: string | null; config: Config; audioSocketPort: number; liveCallStats?: LiveCallStats };


export function presentCall(row: CallRow): CallOut {
  return {
    id: row.id,
    status: row.status,
    agent_language: row.agent_language,
    agent_name: row.agent_name,
    customer_language: row.customer_language,
    customer_name: row.customer_name,
    external_id: row.external_id,
    metadata: row.metadata,
    video: row.video,
    livemode: row.mode === 'live',
    support_session_id: row.support_session_id,
    created_at: row.created_at.toISOString(),
    ended_at: row.ended_at ? row.ended_at.toISOString() : null,
  };
}

/** An event about a call: it carries the call's metadata; `data` is what the contract gives for `type`. */
export const callEvent = <T extends EventType>(row: CallRow, type: T, data: EventData<T>, signal?: CallSignal): NewEvent =>
  newEvent({ orgId: row.org_id, mode: row.mode, type, metadata: row.metadata, data, callId: row.id, signal });

/** The call's languages as the media plane needs them. */
const languagesOf = (row: CallRow) => ({ agent: row.agent_language, customer: row.customer_language });

/** The link that opens a side: its key travels in the fragment, which browsers never send. */
export const sideUrl = (publicBaseUrl: string, callId: string, key: string) => `${publicBaseUrl}/call/${callId}#k=${key}`;

const keyColumn = (side: Side) => (side === 'agent' ? 'agent_key_hash' : 'customer_key_hash');
const lineColumn = (side: Side) => (side === 'agent' ? 'agent_line_id' : 'customer_line_id');
const joinedColumn = (side: Side) => (side === 'agent' ? 'agent_joined_at' : 'customer_joined_at');

export interface NewCall {
  agent_language: string;
  agent_name?: string | null;
  customer_language?: string | null;
  customer_name?: string | null;
  external_id?: string | null;
  metadata?: Metadata;
  video?: boolean;
  transcript?: boolean;
  retention_days?: number | null;
}

export async function createCall(deps: CallDeps, payer: Payer, input: NewCall) {
  // Live calls are billed while they translate: an empty prepaid balance cannot start one.
  await fundedPayer(deps.db, payer);
  const agentKey = newSecret('ck_');
  const customerKey = newSecret('ck_');
  const { row, pins } = await withEvents(deps, async (trx, emit) => {
    const [created] = await trx<CallRow>('calls')
      .insert({
        id: newId('call'),
        org_id: payer.orgId,
        mode: payer.mode,
        status: 'open',
        agent_language: input.agent_language,
        agent_name: input.agent_name ?? DEFAULT_AGENT_NAME,
        customer_language: input.customer_language ?? null,
        customer_name: input.customer_name ?? null,
        external_id: input.external_id ?? null,
        metadata: JSON.stringify(input.metadata ?? {}) as never,
        video: input.video ?? true,
        // The setting in force now, for the whole call: the organization turning transcripts on again
        // later gives none back to a call made while they were off, nor takes one from an open call.
        transcript: input.transcript === false ? false : (trx.raw('(select transcripts from organizations where id = ?)', [payer.orgId]) as never),
        retention_days: input.retention_days ?? null,
        agent_key_hash: hashSecret(agentKey),
        customer_key_hash: hashSecret(customerKey),
      })
      .returning('*');
    await emit(callEvent(created, 'call.created', presentCall(created)));
    return { row: created, pins: await issuePins(trx, created) };
  });
  return {
    ...presentCall(row),
    agent_url: sideUrl(deps.config.publicBaseUrl, row.id, agentKey),
    customer_url: sideUrl(deps.config.publicBaseUrl, row.id, customerKey),
    ...(pins ? { phone_pins: pins } : {}),
  };
}

export const findCall = (db: Knex, payer: Payer, callId: string, lock = false) =>
  findOwned<CallRow>(db, 'calls', payer, callId, 'call', lock);

export function assertOpen(call: CallRow): void {
  if (call.status !== 'open') throw errors.conflict('the call has ended');
}

export interface CallFilter {
  status?: 'open' | 'ended';
  external_id?: string;
  limit?: number;
}

export async function listCalls(db: Knex, payer: Payer, filter: CallFilter): Promise<CallOut[]> {
  return (await listOwned<CallRow>(db, 'calls', payer, filter)).map(presentCall);
}

/** The call as the API shows it, with its `stats` once it has ended. */
export async function presentCallWithStats(deps: Pick<CallDeps, 'db' | 'liveCallStats'>, row: CallRow): Promise<CallOut & { stats: CallStats | null }> {
  return { ...presentCall(row), stats: await callStats(deps.db, row, deps.liveCallStats) };
}

/** Ends the call for both sides; the media plane hears `call.ended` and closes every socket. */
export async function endCall(deps: CallDeps, call: CallRow): Promise<CallRow> {
  return withEvents(deps, async (trx, emit) => {
    const current = (await trx<CallRow>('calls').where({ id: call.id }).forUpdate().first())!;
    assertOpen(current);
    const [ended] = await trx<CallRow>('calls')
      .where({ id: call.id })
      .update({ status: 'ended', ended_at: trx.fn.now() as never, agent_joined_at: null, customer_joined_at: null })
      .returning('*');
    await emit(callEvent(ended, 'call.ended', { ...presentCall(ended), stats: await callStats(trx, ended, deps.liveCallStats) }, { type: 'ended' }));
    return ended;
  });
}

/** A new link for one side: the old link, and every socket opened with it, stop at once. */
export async function rotateSideLink(deps: CallDeps, call: CallRow, side: Side): Promise<{ url: string }> {
  const key = newSecret('ck_');
  await withEvents(deps, async (trx, emit) => {
    const current = (await trx<CallRow>('calls').where({ id: call.id }).forUpdate().first())!;
    assertOpen(current);
    const [updated] = await trx<CallRow>('calls')
      .where({ id: call.id })
      .update({ [keyColumn(side)]: hashSecret(key) })
      .returning('*');
    await emit(callEvent(updated, 'call.link_rotated', { ...presentCall(updated), side }, { type: 'link_replaced', side }));
  });
  return { url: sideUrl(deps.config.publicBaseUrl, call.id, key) };
}

/** A new AudioSocket line for one side; a PBX connected with the old line id is cut off. */
export async function newPhoneLine(deps: CallDeps, call: CallRow, side: Side) {
  assertOpen(call);
  const lineId = randomUUID();
  await withEvents(deps, async (trx, emit) => {
    const current = (await trx<CallRow>('calls').where({ id: call.id }).forUpdate().first())!;
    assertOpen(current);
    const [updated] = await trx<CallRow>('calls').where({ id: call.id }).update({ [lineColumn(side)]: lineId }).returning('*');
    await emit(callEvent(updated, 'call.line_replaced', { ...presentCall(updated), side }, { type: 'line_replaced', side }));
  });
  return { audiosocket_id: lineId, host: deps.config.audioSocketHost, port: deps.audioSocketPort };
}

/** A call by its id alone, whoever owns it (the media plane admits sockets by the call's own secrets). */
export const findCallById = (db: Knex, callId: string): Promise<CallRow | undefined> =>
  db<CallRow>('calls').where({ id: callId }).first();

/** The call whose agent or customer phone line is `lineId`, and which side that line plays. */
export async function findCallByLine(db: Knex, lineId: string): Promise<{ call: CallRow; side: Side } | undefined> {
  const id = lineId.toLowerCase();
  const call = await db<CallRow>('calls').where({ agent_line_id: id }).orWhere({ customer_line_id: id }).first();
  if (!call) return undefined;
  return { call, side: call.agent_line_id === id ? 'agent' : 'customer' };
}

/** The call and side a presented side key opens; a missing, wrong or superseded key is 401. */
export async function callForSide(db: Knex, callId: string, key: string | undefined): Promise<{ call: CallRow; side: Side }> {
  const call = await findCallById(db, callId);
  if (!call) throw errors.notFound('call');
  const hash = key ? hashSecret(key) : undefined;
  if (hash && hash === call.agent_key_hash) return { call, side: 'agent' };
  if (hash && hash === call.customer_key_hash) return { call, side: 'customer' };
  throw errors.invalidCallKey();
}

export const languageOf = (call: CallRow, side: Side) => (side === 'agent' ? call.agent_language : call.customer_language);
export const nameOf = (call: CallRow, side: Side) => (side === 'agent' ? call.agent_name : call.customer_name);
export const keyHashOf = (call: CallRow, side: Side) => call[keyColumn(side)];
export const lineOf = (call: CallRow, side: Side) => call[lineColumn(side)];
export const isJoined = (call: CallRow, side: Side) => call[joinedColumn(side)] !== null;

/** A side opening its link or its media joins the call (once, until it leaves). */
export async function markJoined(deps: Pick<CallDeps, 'db' | 'events'>, call: CallRow, side: Side): Promise<CallRow> {
  if (call.status !== 'open' || isJoined(call, side)) return call;
  return withEvents(serverMade(deps), async (trx, emit) => {
    const [updated] = await trx<CallRow>('calls')
      .where({ id: call.id, status: 'open' })
      .whereNull(joinedColumn(side))
      .update({ [joinedColumn(side)]: trx.fn.now() })
      .returning('*');
    if (!updated) return call;
    await emit(callEvent(updated, 'call.joined', { ...presentCall(updated), side }));
    return updated;
  });
}

/**
 * A side's phone went away (its media stream stopped): the side is no longer present (call.left). The
 * call stays open, and no media signal goes out: other endpoints of the side keep what they have.
 */
export async function markLeft(deps: Pick<CallDeps, 'db' | 'events'>, call: CallRow, side: Side): Promise<void> {
  await withEvents(serverMade(deps), async (trx, emit) => {
    const [updated] = await trx<CallRow>('calls')
      .where({ id: call.id, status: 'open' })
      .whereNotNull(joinedColumn(side))
      .update({ [joinedColumn(side)]: null })
      .returning('*');
    if (updated) await emit(callEvent(updated, 'call.left', { ...presentCall(updated), side }));
  });
}

/** Hang-up on the public endpoint: the agent ends the call for both, the customer only leaves. */
export async function hangUp(deps: CallDeps, call: CallRow, side: Side): Promise<CallRow> {
  assertOpen(call);
  if (side === 'agent') return endCall(deps, call);
  return withEvents(deps, async (trx, emit) => {
    const [updated] = await trx<CallRow>('calls')
      .where({ id: call.id })
      .update({ [joinedColumn(side)]: null })
      .returning('*');
    await emit(callEvent(updated, 'call.left', { ...presentCall(updated), side }, { type: 'left', side }));
    return updated;
  });
}

/** A live call's prepaid balance ran out: interpretation stopped for both sides (the call stays open). */
export async function announceBalanceExhausted(deps: Pick<CallDeps, 'db' | 'events'>, call: CallRow): Promise<void> {
  await withEvents(serverMade(deps), (_trx, emit) => emit(callEvent(call, 'call.balance_exhausted', presentCall(call))));
}

export interface SideSettings {
  language?: string | null;
  name?: string | null;
}

/**
 * My settings: a side's language and/or name. A new language changes what the other side's voice is
 * translated into; the media plane hears `call.updated` with `language_changed` and reconnects it.
 */
export async function updateSideSettings(deps: CallDeps, call: CallRow, side: Side, settings: SideSettings): Promise<CallRow> {
  assertOpen(call);
  const changes: Record<string, string> = {};
  if (settings.language) changes[side === 'agent' ? 'agent_language' : 'customer_language'] = settings.language;
  if (settings.name) changes[side === 'agent' ? 'agent_name' : 'customer_name'] = settings.name;
  if (!Object.keys(changes).length) return call;
  return withEvents(deps, async (trx, emit) => {
    const [updated] = await trx<CallRow>('calls').where({ id: call.id, status: 'open' }).update(changes).returning('*');
    if (!updated) throw errors.conflict('the call has ended');
    const languageChanged = languageOf(updated, side) !== languageOf(call, side);
    await emit(
      callEvent(updated, 'call.updated', { ...presentCall(updated), side, language_changed: languageChanged }, {
        type: 'settings_changed',
        side,
        languageChanged,
        languages: languagesOf(updated),
      }),
    );
    return updated;
  });
}
