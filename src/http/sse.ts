// Writes an event stream the domain described (src/events/stream.ts) as server-sent events:
// backlog after Last-Event-ID, then live events as they are published, heartbeats, and clean-up when the
// client goes away, the credential is revoked or the server stops. Each stream takes one of its holder's
// slots (a limit per holder). Once caught up, a stream that decides nothing per event is written as one
// of a group of streams that show the same events (./liveStreamGroups.ts).
import type { Request, Response } from 'express';
import type { AppContext } from './context.js';
import { errors } from '../errors.js';
import { eventsAfter, latestSequence, sequenceOf } from '../events/log.js';
import type { BusEvent } from '../events/types.js';
import type { EventStream } from '../events/stream.js';
import type { CredentialState } from '../auth/revocation.js';
import { LiveStreamGroups } from './liveStreamGroups.js';
import { streamOutbox, type OutboxStream } from './sseOutbox.js';

const BACKLOG_PAGE = 500;

type StreamDeps = Pick<AppContext, 'db' | 'events' | 'eventStreams' | 'liveStreams' | 'revocations' | 'shutdown' | 'metrics' | 'now' | 'config'>;

const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

type Presenter = EventStream['present'];

/**
 * An event's frame as one kind of stream presents it, made once per event and kind however many
 * streams send it; a stream showing the payload as stored sends the bytes that were stored.
 */
const framesOf = new WeakMap<BusEvent, Map<Presenter, { named?: string; unnamed?: string }>>();

function frame(event: BusEvent, stream: Pick<EventStream, 'present' | 'unnamed'>): string {
  const { present } = stream;
  let frames = framesOf.get(event);
  if (!frames) framesOf.set(event, (frames = new Map()));
  let byNaming = frames.get(present);
  if (!byNaming) frames.set(present, (byNaming = {}));
  const naming = stream.unnamed ? 'unnamed' : 'named';
  let framed = byNaming[naming];
  if (framed === undefined) {
    const data = present(event);
    const json = data === event.payload && event.payloadJson !== undefined ? event.payloadJson : JSON.stringify(data);
    const id = event.seq === null ? '' : `id: ${event.payload.id}\n`;
    const name = stream.unnamed ? '' : `event: ${event.payload.type}\n`;
    framed = byNaming[naming] = `${id}${name}data: ${json}\n\n`;
  }
  return framed;
}

/**
 * Events whose delivery lag is measured: once per event, by the first live stream that takes it (the
 * others take it in the same turn), not once per stream: a thousand observations per event cost more
 * than the delivery itself.
 */
const lagMeasured = new WeakSet<BusEvent>();

function observeLag(metrics: AppContext['metrics'], event: BusEvent): void {
  if (lagMeasured.has(event)) return;
  lagMeasured.add(event);
  metrics.eventDeliveryLag.observe((Date.now() - Date.parse(event.payload.created_at)) / 1000);
}

/**
 * A stream's place in the outbox, once its headers are sent. A chunked body (HTTP/1.1) whose response
 * holds its socket is written to the socket, in chunks the outbox frames once for every stream sent the
 * same bytes; otherwise (HTTP/1.0, a socket not yet assigned) the response frames what it is written.
 */
function outboxStreamOf(res: Response): OutboxStream {
  const { socket } = res;
  return res.chunkedEncoding && socket ? streamOutbox.open(socket, true) : streamOutbox.open(res);
}

/** How a group of live streams is written an event: framed once, queued for each member. */
export function deliverToGroup(metrics: AppContext['metrics'], event: BusEvent, stream: EventStream, members: ReadonlySet<OutboxStream>): void {
  if (!stream.accept(event)) return;
  const text = frame(event, stream);
  streamOutbox.writeEach(members, text);
  observeLag(metrics, event);
}

export async function openEventStream(deps: StreamDeps, req: Request, res: Response, stream: EventStream): Promise<void> {
  const { db, events, revocations, shutdown } = deps;
  const { scope, holder, credential } = stream;
  const release = deps.eventStreams.take(holder.id, holder.limit);
  if (!release) throw holder.refusal();
  if (req.method === 'HEAD') {
    // What a GET would get, at once and without a body: no stream is opened.
    release();
    res.writeHead(200, STREAM_HEADERS).end();
    return;
  }

  // Live events that arrive while the backlog is read wait here; what the backlog already delivered
  // is skipped by sequence number.
  const pending: BusEvent[] = [];
  const deliveredFromBacklog = new Set<number>();
  /**
   * Events the backlog had that this instance has yet to offer its streams (while Redis is away it
   * reads them from the log a little later): each is skipped when it comes, and the stream joins its
   * group once none is left.
   */
  const backlogAhead = new Set<number>();
  let live = false;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;
  /** Where the stream is written, once its headers are sent. */
  let out: OutboxStream | undefined;

  /**
   * Queues the event if the stream shows it; answers whether the stream ends after it. `fresh`: heard
   * live, not read from the backlog (its delivery lag is measured). Synchronous unless the stream must
   * ask the database whether the event is its last: a thousand streams of one organization each take
   * every event it publishes.
   */
  const deliver = (event: BusEvent, fresh: boolean): boolean | Promise<boolean> => {
    if (closed) return false;
    if (stream.accept(event)) {
      streamOutbox.write(out!, frame(event, stream));
      if (fresh) observeLag(deps.metrics, event);
    }
    return stream.endAfter?.(event) ?? false;
  };
  // A failed delivery (the database, behind endAfter) ends the stream; the client resumes from its last id.
  const deliverLive = (event: BusEvent) => {
    let last: boolean | Promise<boolean>;
    try {
      last = deliver(event, true);
    } catch {
      return end();
    }
    if (last === true) end();
    else if (last !== false) last.then((isLast) => isLast && end(), end);
  };
  // Only this scope's events reach the stream (the bus indexes streams by scope). Once live, a groupable
  // stream listens through its group instead.
  let stopListening = events.subscribeTo(scope, (event) => {
    if (!live) pending.push(event);
    else if (event.seq === null || !backlogAhead.delete(event.seq)) deliverLive(event);
    // After the bus has offered this event to every listener, not while it does.
    else if (!backlogAhead.size) queueMicrotask(joinGroup);
  });
  let grouped = false;
  /** Caught up: what is published from now on reaches the stream through its group, if it has one. */
  function joinGroup() {
    if (grouped || closed || backlogAhead.size || !LiveStreamGroups.groupable(stream)) return;
    grouped = true;
    stopListening();
    stopListening = deps.liveStreams.join(stream, out!);
  }
  let revokedBeforeStart = false;
  /** Wakes the stream when its credential's end comes (a rolled key's overlap), to look again. */
  let expiry: NodeJS.Timeout | undefined;
  /**
   * What the credential's state means for the stream: one that no longer works ends it (or refuses it, not
   * yet started); one with an end (a rolled key's overlap) gets a timer to look again then.
   */
  const settle = (state: CredentialState) => {
    if (closed) return;
    clearTimeout(expiry);
    // A credential that names its own end (an app's access token) is over once the clock passes it.
    if (!state.active || (state.expiresAt !== null && state.expiresAt <= deps.now())) {
      if (res.headersSent) end();
      else revokedBeforeStart = true;
      return;
    }
    if (state.expiresAt === null) return;
    // Never longer than the check interval: the clock may be moved (tests inject one), and Node's timers stop at 24.8 days.
    const wait = Math.max(0, Math.min(state.expiresAt - deps.now(), deps.config.connections.credentialExpiryCheckMs));
    expiry = setTimeout(lookAgain, wait);
  };
  // Unsure whether the credential still works (the database failed): the client reconnects and is checked again.
  const lookAgain = () => void credential!.state().then(settle, () => settle({ active: false }));
  // An announcement is heard once: the watcher watches again, so a revocation after a roll is heard too.
  const watch = (): (() => void) =>
    credential
      ? revocations.watch(credential.id, () => {
          unwatch = watch();
          lookAgain();
        })
      : () => {};
  let unwatch = watch();
  /** Lets go of everything the stream holds; true the first time. */
  const letGo = () => {
    if (closed) return false;
    closed = true;
    clearInterval(heartbeat);
    clearTimeout(expiry);
    stopListening();
    unwatch();
    release();
    shutdown.removeEventListener('abort', end);
    return true;
  };
  function end() {
    if (!letGo()) return;
    if (out) streamOutbox.close(out);
    res.end();
  }
  // The client leaving (its socket closing, or failing) ends the stream, as do shutdown and revocation.
  res.once('close', end);
  res.on('error', end);
  // A server shutting down ends its streams, or it would wait for them forever.
  shutdown.addEventListener('abort', end, { once: true });
  // The client may have gone while the request was authenticated: its 'close' has already passed.
  if (res.destroyed) end();

  let startSeq: number;
  let resumeFrom: number | null;
  try {
    if (shutdown.aborted) throw errors.unavailable('the server is shutting down');
    const lastEventId = req.get('last-event-id');
    // Where the stream starts: after the client's last event, or (new stream, unknown id) now. Read
    // after subscribing, so that anything committed after this read comes live.
    resumeFrom = lastEventId ? await sequenceOf(db, scope, lastEventId) : null;
    startSeq = resumeFrom ?? (await latestSequence(db));
    // Watching began before this check, so a revocation is seen here or announced to the watcher.
    if (credential) {
      settle(await credential.state());
      if (revokedBeforeStart) throw credential.refusal();
    }
  } catch (err) {
    // Nothing sent yet: the error handler answers.
    if (letGo()) throw err;
    return;
  }
  if (closed) return;

  res.writeHead(200, STREAM_HEADERS).flushHeaders();
  const opened = (out = outboxStreamOf(res));
  streamOutbox.write(opened, ': connected\n\n');
  heartbeat = setInterval(() => streamOutbox.write(opened, ': heartbeat\n\n'), stream.heartbeatMs);

  // A resumed stream reads what it missed from the log. A new one starts at the latest event: whatever
  // commits after that is published after its commit, so after this stream subscribed, and comes live.
  for (let after = startSeq; resumeFrom !== null && !closed; ) {
    const page = await eventsAfter(db, scope, after, BACKLOG_PAGE);
    for (const event of page) {
      deliveredFromBacklog.add(event.seq!);
      if (await deliver(event, false)) end();
    }
    if (page.length < BACKLOG_PAGE) break;
    after = page[page.length - 1].seq!;
  }
  for (const seq of deliveredFromBacklog) if (!events.delivered(seq)) backlogAhead.add(seq);
  live = true;
  for (const event of pending.splice(0)) {
    const seen = event.seq !== null && (event.seq <= startSeq || deliveredFromBacklog.has(event.seq));
    if (event.seq !== null) backlogAhead.delete(event.seq);
    if (!seen && (await deliver(event, true))) end();
  }
  joinGroup();
}
