import type { Mode } from '../auth/principal.js';
import type { components } from '../generated/api.js';

type Side = components['schemas']['Side'];

export type Metadata = Record<string, string | number | boolean | null>;

/** An event as clients see it (the `data:` of a server-sent event). */
export interface EventPayload {
  id: string;
  type: string;
  created_at: string;
  livemode: boolean;
  metadata: Metadata;
  data: unknown;
  /** The installed app whose request made the change (absent for API keys and customers). */
  app_id?: string;
}

/** An event inside the server: the payload plus what streams filter and resume on. */
export interface BusEvent {
  payload: EventPayload;
  /** The payload as JSON, when it was serialised already (to be stored): streams send these bytes. */
  payloadJson?: string;
  orgId: string;
  mode: Mode;
  sessionId: string | null;
  callId: string | null;
  /** Position in the stored log; null for ephemeral events (typing), which cannot be resumed from. */
  seq: number | null;
  /** How many webhook deliveries storing it queued (absent: none); the instance that hears it sends them. */
  webhookDeliveries?: number;
  /** What the change means for a call's media, typed; stored with the event, never shown to clients. */
  signal?: CallSignal;
}

/**
 * What the media plane reacts to when a call changes, carried beside the public event so that media
 * code never reads the public payload: the call ended; one side's link, presence or phone line
 * changed; a side's settings changed (the call's languages as they are now).
 */
export type CallSignal =
  | { type: 'ended' }
  | { type: 'link_replaced'; side: Side }
  | { type: 'left'; side: Side }
  | { type: 'line_replaced'; side: Side }
  | { type: 'settings_changed'; side: Side; languageChanged: boolean; languages: Record<Side, string | null> };

/** The events of the contract (openapi.yaml `Event`), one member per type. */
export type ApiEvent = components['schemas']['Event'];
export type EventType = ApiEvent['type'];
/** What an event of type `T` carries as `data`, as the contract says. */
export type EventData<T extends EventType> = Extract<ApiEvent, { type: T }>['data'];

export interface NewEventOf<T extends EventType> {
  orgId: string;
  mode: Mode;
  type: T;
  metadata: Metadata;
  data: EventData<T>;
  sessionId?: string | null;
  callId?: string | null;
  messageId?: number | null;
  signal?: CallSignal;
}

/** An event to record: its `type` decides the shape of its `data` (a type the contract lacks does not compile). */
export type NewEvent = { [T in EventType]: NewEventOf<T> }[EventType];

/**
 * One event of a type known only as a type parameter: TypeScript cannot see that an event of some `T`
 * is a member of the union, so the one cast is here, where `data` was already checked against `T`.
 */
export const newEvent = <T extends EventType>(event: NewEventOf<T>): NewEvent => event as unknown as NewEvent;

/** The part of the event log a stream follows: an organization in one mode, or one of its sessions. */
export interface EventScope {
  orgId: string;
  mode: Mode;
  sessionId?: string;
}
