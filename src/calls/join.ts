// What a side learns when it opens its link (JoinOut), and the media credentials in it. The stream
// token and the listen unlock are derived from the side's key hash, so a new link invalidates them.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { getOrganization } from '../organizations/organizations.js';
import type { Config } from '../config.js';
import { iceServersFor } from './iceServers.js';
import { keyHashOf, languageOf, nameOf, otherSide, type CallRow, type Side } from './calls.js';

/** What a media secret opens: the side's stream, what it hears, its WebRTC signalling. */
type Purpose = 'stream' | 'listen' | 'signal';

/** `ch_<call id without prefix>_<a|c>`: the channel a side's voice goes into. */
export const channelId = (callId: string, side: Side) => `ch_${callId.replace(/^call_/, '')}_${side === 'agent' ? 'a' : 'c'}`;

export function parseChannelId(channel: string): { callId: string; side: Side } | null {
  const match = /^ch_([0-9A-Za-z]+)_([ac])$/.exec(channel);
  return match ? { callId: `call_${match[1]}`, side: match[2] === 'a' ? 'agent' : 'customer' } : null;
}

export function mediaSecret(call: CallRow, side: Side, purpose: Purpose): string {
  return createHmac('sha256', keyHashOf(call, side)).update(`${purpose}:${call.id}:${side}`).digest('base64url');
}

export function verifyMediaSecret(call: CallRow, side: Side, purpose: Purpose, presented: string | null): boolean {
  if (!presented) return false;
  const expected = Buffer.from(mediaSecret(call, side, purpose));
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export const isReady = (call: CallRow) => call.status === 'open' && call.customer_language !== null;

/** A side's ICE servers at `nowMs`; its TURN user is its stream channel, so coturn's logs name the side of the call. */
export const sideIceServers = (config: Pick<Config, 'iceServers' | 'turn'>, callId: string, side: Side, nowMs: number) =>
  iceServersFor(config, channelId(callId, side), nowMs);

export async function joinInfo(db: Knex, config: Config, call: CallRow, side: Side, nowMs: number) {
  const org = await getOrganization(db, call.org_id);
  const other = otherSide(side);
  const ready = isReady(call);
  // A side hears the other's voice: its listen channel is the other side's stream channel.
  const streamChannel = channelId(call.id, side);
  const listenChannel = channelId(call.id, other);
  return {
    id: call.id,
    company: org.name,
    role: side,
    status: call.status,
    video: call.video,
    ready,
    my_language: languageOf(call, side),
    my_name: nameOf(call, side),
    other_language: languageOf(call, other),
    other_name: nameOf(call, other),
    // None once the call has ended: the side's TURN credentials stop with the call.
    ice_servers: call.status === 'open' ? sideIceServers(config, call.id, side, nowMs) : [],
    stream: ready
      ? { channel_id: streamChannel, path: `/media/stream/${streamChannel}`, source_id: side, token: mediaSecret(call, side, 'stream') }
      : null,
    listen: ready
      ? { channel_id: listenChannel, path: `/media/listen/${listenChannel}`, unlock: mediaSecret(call, side, 'listen') }
      : null,
    signal: ready
      ? { channel_id: streamChannel, path: `/media/signal/${streamChannel}`, token: mediaSecret(call, side, 'signal') }
      : null,
  };
}
