// The REST side: openapi-fetch over the contract's generated `paths`, so every path, parameter, body
// and answer is typed, errors included.
import createFetchClient, { type Client as FetchClient } from 'openapi-fetch';
import { eventStream, type Event, type EventStreamOptions } from './events.js';
import { connectionOf, type ClientOptions } from './http.js';
import type { paths } from './schema.js';

export type Client = FetchClient<paths> & {
  /** The key's live events (`GET /v1/events`, scope `events:read`), resumed across drops. */
  events(options?: EventStreamOptions): AsyncGenerator<Event>;
  /** One support session's events (`GET /v1/sessions/{session_id}/stream`, scope `sessions:read`). */
  sessionEvents(sessionId: string, options?: EventStreamOptions): AsyncGenerator<Event>;
};

export function createClient(options: ClientOptions): Client {
  const connection = connectionOf(options);
  const rest = createFetchClient<paths>({ baseUrl: connection.baseUrl, headers: connection.headers, fetch: connection.fetch });
  return Object.assign(rest, {
    events: (streamOptions?: EventStreamOptions) => eventStream(connection, '/v1/events', streamOptions),
    sessionEvents: (sessionId: string, streamOptions?: EventStreamOptions) =>
      eventStream(connection, `/v1/sessions/${encodeURIComponent(sessionId)}/stream`, streamOptions),
  });
}

