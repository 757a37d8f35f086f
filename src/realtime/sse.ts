// Server-sent event streams over the event log and bus: backlog after Last-Event-ID, then live events
// as they are published, heartbeats, and clean-up when the client goes away.
import type { Request, Response } from 'express';
import type { Knex } from 'knex';
import type { EventBus } from '../events/bus.js';
import { eventsAfter, latestSequence, sequenceOf, type StreamScope } from '../events/log.js';
import type { BusEvent } from '../events/types.js';

const BACKLOG_PAGE = 500;

export interface StreamOptions {
  db: Knex;
  bus: EventBus;
  scope: StreamScope;
  /** Which events of the scope this stream shows (the log and the bus carry more). */
  accept(event: BusEvent): boolean;
  /** What the client sees of an event. */
  present(event: BusEvent): unknown;
  /** Ends the stream after this event has been handled (e.g. the session was deleted). */
  endAfter?(event: BusEvent): boolean | Promise<boolean>;
  heartbeatMs: number;
  shutdown: AbortSignal;
}

const inScope = (scope: StreamScope, event: BusEvent) =>
  event.orgId === scope.orgId &&
  event.mode === scope.mode &&
  (scope.sessionId === undefined || event.sessionId === scope.sessionId);

function frame(event: BusEvent, data: unknown): string {
  const id = event.seq === null ? '' : `id: ${event.payload.id}\n`;
  return `${id}event: ${event.payload.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

export async function openEventStream(req: Request, res: Response, options: StreamOptions): Promise<void> {
  const { db, bus, scope } = options;
  const lastEventId = req.get('last-event-id');
  // Where the stream starts: after the client's last event, or (new stream, unknown id) now. Read
  // before subscribing; the backlog query below then covers whatever commits in between.
  const resumeFrom = lastEventId ? await sequenceOf(db, scope, lastEventId) : null;
  const startSeq = resumeFrom ?? (await latestSequence(db));

  // Live events that arrive while the backlog is read wait here; what the backlog already delivered
  // is skipped by sequence number.
  const pending: BusEvent[] = [];
  const deliveredFromBacklog = new Set<number>();
  let live = false;
  let closed = false;

  const deliver = async (event: BusEvent) => {
    if (closed || !inScope(scope, event)) return;
    if (options.accept(event)) res.write(frame(event, options.present(event)));
    if (await options.endAfter?.(event)) end();
  };
  const unsubscribe = bus.subscribe((event) => {
    if (live) void deliver(event);
    else pending.push(event);
  });
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), options.heartbeatMs);
  const end = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    unsubscribe();
    options.shutdown.removeEventListener('abort', end);
    res.end();
  };
  req.on('close', end);
  // A server shutting down ends its streams, or it would wait for them forever.
  options.shutdown.addEventListener('abort', end, { once: true });

  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.write(': connected\n\n');

  for (let after = startSeq; !closed; ) {
    const page = await eventsAfter(db, scope, after, BACKLOG_PAGE);
    for (const event of page) {
      deliveredFromBacklog.add(event.seq!);
      await deliver(event);
    }
    if (page.length < BACKLOG_PAGE) break;
    after = page[page.length - 1].seq!;
  }
  live = true;
  for (const event of pending.splice(0)) {
    const seen = event.seq !== null && (event.seq <= startSeq || deliveredFromBacklog.has(event.seq));
    if (!seen) await deliver(event);
  }
}
