// A server-sent events client for tests: reads the raw stream with fetch, as the customer page does.
import { trackWait } from './waiting.js';
export interface ReceivedEvent {
  id: string | null;
  event: string;
  data: any;
  /** The data as sent, before parsing. */
  dataText: string;
}

export interface EventStreamClient {
  status: number;
  events: ReceivedEvent[];
  comments: string[];
  /**
   * Resolves with the first event (already received or still to come) that matches, asked again as each
   * event arrives; no deadline of its own (a failing test says what it was waiting for and what came:
   * ./waiting.ts).
   */
  waitFor(match: (event: ReceivedEvent) => boolean): Promise<ReceivedEvent>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openEventStream(url: string, headers: Record<string, string>): Promise<EventStreamClient> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const events: ReceivedEvent[] = [];
  const comments: string[] = [];
  const waiters: Array<() => void> = [];
  const notify = () => waiters.splice(0).forEach((wake) => wake());

  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let boundary: number;
        while ((boundary = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(':');
              fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
            }
          }
          if (fields.data !== undefined) {
            events.push({ id: fields.id ?? null, event: fields.event ?? 'message', data: JSON.parse(fields.data), dataText: fields.data });
          }
          notify();
        }
      }
    } catch {
      // aborted by close()
    }
    notify();
  })();

  return {
    status: res.status,
    events,
    comments,
    ended,
    close: () => controller.abort(),
    waitFor(match) {
      return new Promise((resolve) => {
        const check = () => {
          const found = events.find(match);
          if (!found) return void waiters.push(check);
          done();
          resolve(found);
        };
        const done = trackWait(
          () => `a matching event on ${url} (received: ${events.map((e) => e.event).join(', ') || 'none'})`,
          () => {
            const at = waiters.indexOf(check);
            if (at >= 0) waiters.splice(at, 1);
          },
        );
        check();
      });
    },
  };
}
