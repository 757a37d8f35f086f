// The live streams over the event log, as descriptions the HTTP layer opens: the organization's (for
// API keys and apps, and the console's live view), one session's (for agents), and the customer's view
// of one session.
import { credentialIdOf, type ApiPrincipal, type Mode } from '../auth/principal.js';
import { errors } from '../errors.js';
import type { EventStream } from '../events/stream.js';
import { memberSessionState } from '../members/sessions.js';
import { isConnectionActive } from '../oauth/connections.js';
import { apiKeyState } from '../auth/apiKeys.js';
import type { BusEvent } from '../events/types.js';
import { customerAudioPath, type MessageOut } from './messages.js';
import type { SessionRow } from './sessions.js';
import type { Config } from '../config.js';
import type { Knex } from 'knex';

type StreamDeps = { db: Knex; config: Config; now: () => number };

const everything = () => true;
const asStored = (event: BusEvent) => event.payload;

/**
 * A stream opened with an API key or an app's access token: one of the credential's streams, ended when the key is
 * revoked or its overlap after a roll ends, or when the app is uninstalled or its access token expires.
 */
function heldByKey(app: StreamDeps, principal: ApiPrincipal): Pick<EventStream, 'holder' | 'credential'> {
  const credentialId = credentialIdOf(principal);
  const limit = app.config.connections.eventStreamsPerKey;
  return {
    holder: { id: `credential:${credentialId}`, limit, refusal: () => errors.tooManyStreams('API key', limit) },
    credential: {
      id: credentialId,
      state: async () =>
        principal.kind === 'apiKey'
          ? apiKeyState(app.db, principal.keyId, app.now())
          : (await isConnectionActive(app.db, principal.connectionId))
            ? { active: true, expiresAt: principal.expiresAt }
            : { active: false },
      refusal: principal.kind === 'apiKey' ? errors.invalidApiKey : errors.invalidAccessToken,
    },
  };
}

export function organizationEvents(app: StreamDeps, principal: ApiPrincipal): EventStream {
  return {
    scope: { orgId: principal.orgId, mode: principal.mode },
    accept: everything,
    present: asStored,
    ...heldByKey(app, principal),
    heartbeatMs: app.config.sseHeartbeatMs,
  };
}

/** The console's live view of the organization in one mode, held by a member's console session: signing out, or the session's end, ends it. */
export function consoleEvents(app: StreamDeps, view: { orgId: string; mode: Mode; sessionId: string }): EventStream {
  const limit = app.config.connections.eventStreamsPerKey;
  return {
    scope: { orgId: view.orgId, mode: view.mode },
    accept: everything,
    present: asStored,
    unnamed: true,
    holder: { id: `console:${view.sessionId}`, limit, refusal: () => errors.tooManyStreams('console session', limit) },
    credential: {
      id: view.sessionId,
      state: () => memberSessionState(app.db, view.sessionId, app.now()),
      refusal: errors.signedOut,
    },
    heartbeatMs: app.config.sseHeartbeatMs,
  };
}

export function sessionEvents(app: StreamDeps, principal: ApiPrincipal, session: SessionRow): EventStream {
  return {
    scope: { orgId: session.org_id, mode: session.mode, sessionId: session.id },
    accept: everything,
    present: asStored,
    endAfter: (event) => event.payload.type === 'session.deleted',
    ...heldByKey(app, principal),
    heartbeatMs: app.config.sseHeartbeatMs,
  };
}

const CUSTOMER_EVENT_TYPES = new Set(['message.created', 'session.typing', 'session.updated', 'session.closed']);

/** What the customer may see: no metadata (the organization's own notes), no agent-side internals. */
function forCustomer(event: BusEvent) {
  const { metadata: _internal, ...payload } = event.payload;
  if (payload.type === 'message.created') {
    const message = payload.data as MessageOut;
    const audio_url = message.audio_url && customerAudioPath({ id: message.id, session_id: message.session_id });
    return { ...payload, data: { ...message, audio_url } };
  }
  if (payload.type === 'session.updated' || payload.type === 'session.closed') {
    return { ...payload, data: { ...(payload.data as object), metadata: {} } };
  }
  return payload;
}

/** `keyHash`: the hash of the chat key the stream is opened with. */
export function customerEvents(app: StreamDeps, session: SessionRow, keyHash: string): EventStream {
  const limit = app.config.connections.chatStreamsPerSession;
  return {
    scope: { orgId: session.org_id, mode: session.mode, sessionId: session.id },
    accept: (event) =>
      CUSTOMER_EVENT_TYPES.has(event.payload.type) &&
      !(event.payload.type === 'session.typing' && (event.payload.data as { sender: string }).sender === 'customer'),
    present: forCustomer,
    // The stream belongs to the link it was opened with: it ends when that link stops working.
    endAfter: async (event) => {
      if (event.payload.type === 'session.deleted') return true;
      if (event.payload.type !== 'session.link_rotated') return false;
      const current = await app.db('sessions').where({ id: session.id }).first('customer_key_hash');
      return current?.customer_key_hash !== keyHash;
    },
    holder: { id: `chat:${session.id}`, limit, refusal: () => errors.tooManyStreams('chat session', limit) },
    heartbeatMs: app.config.sseHeartbeatMs,
  };
}
