// Admission of a media WebSocket, step by step: the address is not guessing, the path names a stream,
// listen or signalling channel, the call exists, the token (stream, signal) or unlock (listen) is the
// side's current one,
// the call is open and ready, the side has a socket slot left, and the side is marked present.
import type { Knex } from 'knex';
import type { Duplex } from 'node:stream';
import type { EventBus } from '../../../../events/bus.js';
import type { ConnectionSlots } from '../../../../ratelimit/connectionSlots.js';
import { markJoined } from '../../../calls.js';
import { parseChannelId, verifyMediaSecret } from '../../../join.js';
import { otherSide, type Side } from '../../../side.js';
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
import { LISTEN_PATH_PREFIX, SIGNAL_PATH_PREFIX, SOURCE_ID_PATTERN, STREAM_PATH_PREFIX } from '../../protocol.js';

export type SocketKind = 'stream' | 'listen' | 'signal';

export interface SocketAdmission extends AdmissionContext {
  /** Joining writes the side's presence (call.joined). */
  db: Knex;
  url: URL;
  socket: Duplex;
  events: EventBus;
  slots: ConnectionSlots;
  socketsPerSide: number;
  kind?: SocketKind;
  channel?: string;
  /** The side that owns the socket: a stream's own side, or the side that listens. */
  side?: Side;
  sourceId?: string;
  secret?: string | null;
}

export interface AdmittedSocket {
  kind: SocketKind;
  side: Side;
  sourceId: string;
  secret: string | null;
}

const PREFIXES: ReadonlyArray<[string, SocketKind]> = [
  [STREAM_PATH_PREFIX, 'stream'],
  [LISTEN_PATH_PREFIX, 'listen'],
  [SIGNAL_PATH_PREFIX, 'signal'],
];

const parseEndpoint: AdmissionStep<SocketAdmission> = (ctx) => {
  const path = ctx.url.pathname;
  const match = PREFIXES.find(([prefix]) => path.startsWith(prefix));
  if (!match) return refuse('no_endpoint');
  ctx.kind = match[1];
  ctx.channel = path.slice(match[0].length);
  return undefined;
};

/**
 * A stream and a signalling socket are opened by the channel's own side; a listener is the other
 * side, hearing this channel.
 */
const parseChannel: AdmissionStep<SocketAdmission> = (ctx) => {
  const channel = parseChannelId(ctx.channel!);
  if (!channel) return refuse('unknown_call');
  ctx.callId = channel.callId;
  ctx.side = ctx.kind === 'listen' ? otherSide(channel.side) : channel.side;
  ctx.sourceId = ctx.url.searchParams.get('source_id') ?? channel.side;
  ctx.secret = ctx.url.searchParams.get(ctx.kind === 'listen' ? 'unlock' : 'token');
  return undefined;
};

const checkSourceId: AdmissionStep<SocketAdmission> = (ctx) =>
  ctx.kind === 'stream' && !SOURCE_ID_PATTERN.test(ctx.sourceId!) ? refuse('bad_source_id') : undefined;

const verifySecret: AdmissionStep<SocketAdmission> = (ctx) =>
  verifyMediaSecret(ctx.call!, ctx.side!, ctx.kind!, ctx.secret ?? null)
    ? undefined
    : refuse(ctx.kind === 'listen' ? 'bad_unlock' : 'bad_token');

/** A slot among the side's sockets of this kind, held until the socket closes, whichever way it ends. */
const takeSlot: AdmissionStep<SocketAdmission> = (ctx) => {
  const release = ctx.slots.take(`${ctx.kind}:${ctx.call!.id}:${ctx.side}`, ctx.socketsPerSide);
  if (!release) return refuse('too_many_sockets');
  ctx.socket.once('close', release);
  if (!ctx.socket.destroyed) return undefined;
  release();
  return refuse('client_gone');
};

/** Opening its media puts a side in the call: one that hung up and reconnects is back (call.joined). */
const join: AdmissionStep<SocketAdmission> = async (ctx) => {
  await markJoined(ctx, ctx.call!, ctx.side!);
  return undefined;
};

const STEPS: ReadonlyArray<AdmissionStep<SocketAdmission>> = [
  notGuessing,
  parseEndpoint,
  notWhileClosing,
  parseChannel,
  checkSourceId,
  loadCall,
  verifySecret,
  requireOpen,
  requireReady,
  takeSlot,
  join,
  notWhileClosing,
];

export async function admitSocket(ctx: SocketAdmission): Promise<AdmittedSocket | Refused> {
  const refusal = await admit(ctx, STEPS);
  if (refusal) return refusal;
  return { kind: ctx.kind!, side: ctx.side!, sourceId: ctx.sourceId!, secret: ctx.secret ?? null };
}
