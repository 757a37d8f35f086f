// Server-sent events as an async iterator of typed events: heartbeats (comment lines) are skipped, and
// a dropped connection is reopened with `Last-Event-ID`, so no stored event is missed or seen twice.
import { ApiError, type Connection } from './http.js';
import type { components } from './schema.js';

/** An event as the contract describes it (discriminated on `type` where the contract is). */
export type Event = components['schemas']['Event'];

export interface EventStreamOptions {
  /** Resume after this event (the `id` of the last one handled, e.g. kept across restarts). */
  lastEventId?: string;
  /** Ends the iteration (and the connection) when aborted. */
  signal?: AbortSignal;
  /** Wait before reopening a dropped stream, unless the server's `retry:` says otherwise (default 1000 ms). */
  retryMs?: number;
  /** Called each time a connection is answered: from here on, nothing that happens is missed. */
  onOpen?: () => void;
  /** Called when a connection drops and is about to be reopened (for logs and tests). */
  onReconnect?: (error: unknown) => void;
}

interface Message {
  id: string | undefined;
  event: string;
  data: string;
  retry: number | undefined;
}

/** Splits an SSE byte stream into messages (WHATWG rules: CR, LF or CRLF; comment lines skipped). */
export async function* sseMessages(body: AsyncIterable<Uint8Array>): AsyncGenerator<Message> {
  const decoder = new TextDecoder();
  let buffer = '';
  let message: Message = { id: undefined, event: 'message', data: '', retry: undefined };
  let dataLines: string[] = [];
  const lineAt = () => {
    const match = /\r\n|\r|\n/.exec(buffer);
    // A lone CR at the end may be half of a CRLF still in flight.
    if (!match || (match[0] === '\r' && match.index === buffer.length - 1)) return null;
    const line = buffer.slice(0, match.index);
    buffer = buffer.slice(match.index + match[0].length);
    return line;
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let line: string | null;
    while ((line = lineAt()) !== null) {
      if (line === '') {
        if (dataLines.length) yield { ...message, data: dataLines.join('\n') };
        message = { id: undefined, event: 'message', data: '', retry: undefined };
        dataLines = [];
        continue;
      }
      if (line.startsWith(':')) continue; // a heartbeat or other comment
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') dataLines.push(value);
      else if (field === 'event') message.event = value;
      else if (field === 'id' && !value.includes('\0')) message.id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value);
    }
  }
}

const aborted = (signal: AbortSignal | undefined) => signal?.aborted === true;

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (aborted(signal)) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The events of one stream endpoint, for as long as the caller iterates (or until `signal` aborts).
 * A refusal (401, 403, 404, 429) ends the iteration with an `ApiError`; a drop, a network error or a
 * 5xx is retried, resuming after the last event received.
 */
export async function* eventStream(connection: Connection, path: string, options: EventStreamOptions = {}): AsyncGenerator<Event> {
  let lastEventId = options.lastEventId;
  let retryMs = options.retryMs ?? 1_000;
  while (!aborted(options.signal)) {
    const controller = new AbortController();
    const stop = () => controller.abort();
    options.signal?.addEventListener('abort', stop, { once: true });
    let refusal: ApiError | undefined;
    try {
      const response = await connection.fetch(`${connection.baseUrl}${path}`, {
        headers: {
          ...connection.headers,
          Accept: 'text/event-stream',
          ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}),
        },
        signal: controller.signal,
      });
      if (!response.ok || !response.body) {
        const body = await response.json().catch(() => ({ detail: response.statusText }));
        const error = new ApiError(response.status, body, response.headers);
        if (response.status < 500) refusal = error;
        else options.onReconnect?.(error);
      } else {
        options.onOpen?.();
        for await (const message of sseMessages(response.body as unknown as AsyncIterable<Uint8Array>)) {
          if (message.retry !== undefined) retryMs = message.retry;
          // Events not stored (typing) carry no id and cannot be resumed from; they leave the last id as it is.
          if (message.id) lastEventId = message.id;
          yield JSON.parse(message.data) as Event;
        }
        if (!aborted(options.signal)) options.onReconnect?.(new Error('the server ended the stream'));
      }
    } catch (error) {
      if (aborted(options.signal)) return;
      options.onReconnect?.(error);
    } finally {
      options.signal?.removeEventListener('abort', stop);
      controller.abort(); // the caller stopped iterating, or the stream is being reopened
    }
    if (refusal) throw refusal;
    await pause(retryMs, options.signal);
  }
}
