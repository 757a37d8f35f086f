import type { Mode } from '../auth/principal.js';

export type Metadata = Record<string, string | number | boolean | null>;

/** An event as clients see it (the `data:` of a server-sent event). */
export interface EventPayload {
  id: string;
  type: string;
  created_at: string;
  livemode: boolean;
  metadata: Metadata;
  data: unknown;
}

/** An event inside the server: the payload plus what streams filter and resume on. */
export interface BusEvent {
  payload: EventPayload;
  orgId: string;
  mode: Mode;
  sessionId: string | null;
  callId: string | null;
  /** Position in the stored log; null for ephemeral events (typing), which cannot be resumed from. */
  seq: number | null;
}

export interface NewEvent {
  orgId: string;
  mode: Mode;
  type: string;
  metadata: Metadata;
  data: unknown;
  sessionId?: string | null;
  callId?: string | null;
  messageId?: number | null;
}
