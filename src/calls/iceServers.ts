// The ICE servers a side of a call gets with its join answer: the configured ones (ICE_SERVERS) and,
// with a coturn server using `use-auth-secret`, TURN credentials of its own that expire soon
// (TURN_CREDENTIAL_TTL_SECONDS), so that no password is shared by every caller and one handed to a side
// stops working shortly after its call: while the side is in the call it is sent fresh ones.
import { createHmac } from 'node:crypto';
import type { Config, IceServer, TurnSettings } from '../config.js';

/**
 * coturn's TURN REST credentials: username `<expiry unix seconds>:<user>`, password base64 of
 * HMAC-SHA1(static-auth-secret, username). coturn recomputes the password and refuses an expired one.
 */
export function turnCredentials(turn: TurnSettings, user: string, nowMs: number): IceServer {
  const username = `${Math.floor(nowMs / 1000) + turn.ttlSeconds}:${user}`;
  const credential = createHmac('sha1', turn.secret).update(username).digest('base64');
  return { urls: turn.urls, username, credential };
}

/** Every ICE server for `user` (a side of a call) at `nowMs`: the configured ones, then its own TURN entry. */
export function iceServersFor(config: Pick<Config, 'iceServers' | 'turn'>, user: string, nowMs: number): IceServer[] {
  return config.turn ? [...config.iceServers, turnCredentials(config.turn, user, nowMs)] : config.iceServers;
}

/**
 * How often a side in the call is sent fresh credentials: every half of their lifetime, so the ones it
 * holds always have half of it left. coturn checks the expiry against its own clock when an allocation
 * is made; a TURN server whose clock runs ahead of this one by less than that half still takes them.
 */
export const turnRenewalMs = (turn: TurnSettings) => (turn.ttlSeconds * 1000) / 2;
