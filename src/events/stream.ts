// An event stream as the domain describes it: which part of the event log it follows, which events it
// shows and how, when it ends, whose it is and which credential keeps it open. The HTTP layer
// (src/http/sse.ts) opens it as server-sent events: backlog, live events, heartbeats, slots, revocation.
import type { CredentialState } from '../auth/revocation.js';
import type { ApiError } from '../errors.js';
import type { BusEvent, EventScope } from './types.js';

export interface EventStream {
  scope: EventScope;
  /** Which events of the scope this stream shows (the log and the bus carry more). */
  accept(event: BusEvent): boolean;
  /** What the client sees of an event. */
  present(event: BusEvent): unknown;
  /**
   * Frames without the `event:` line (the type is in the data): a browser's EventSource then hears
   * every event with one handler instead of one listener per type.
   */
  unnamed?: boolean;
  /** Ends the stream after this event has been handled (e.g. the session was deleted). */
  endAfter?(event: BusEvent): boolean | Promise<boolean>;
  /** Whose stream this is: it takes one of the holder's slots, or is refused with `refusal`. */
  holder: { id: string; limit: number; refusal(): ApiError };
  /** The credential the stream was opened with: its revocation, or the end of its overlap after a roll, ends the stream. */
  credential?: {
    id: string;
    /**
     * Whether the credential still works and until when, read afresh: it may have been revoked before the
     * stream watched, and an announcement says only that something changed (a roll gives it an end).
     */
    state(): Promise<CredentialState>;
    /** What a revoked credential gets. */
    refusal(): ApiError;
  };
  /** How often a quiet stream says it is still there. */
  heartbeatMs: number;
}
