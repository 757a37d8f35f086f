// Delivers events to the streams and media rooms open in this process. One interface, so an
// implementation that fans out through Redis can serve several instances without the streams knowing.
//
// Cheap with many streams: a stream subscribes to its scope (organization and mode, or one session), so an
// event is offered only to the streams that may see it, not to every stream in the process. And an
// answer is not kept waiting for the fan-out: events committed while a request is being answered are
// held until its response is sent (`hold`), then published, per organization in the order they were
// committed, so a later request's events never overtake an earlier one's. The request publishes through
// the hold's own view of the bus, passed to it explicitly: no async context to track across its awaits.
import type { BusEvent, EventScope } from './types.js';

export type EventListener = (event: BusEvent) => void;

/** What is published through `events` waits until `release` (the response was sent), or goes out at once after it. */
export interface PublicationHold {
  events: EventBus;
  release(): void;
}

export interface EventBus {
  /** Publishes a committed (or ephemeral) event: now, or once the hold it was made under is released. */
  publish(event: BusEvent): void;
  /** Every event of every organization (the media plane, which keys on calls). */
  subscribe(listener: EventListener): () => void;
  /** The events of one scope only; with a session, that session's only. */
  subscribeTo(scope: EventScope, listener: EventListener): () => void;
  /** A view of the bus that holds what is published through it until the answer of one request is out. */
  hold(): PublicationHold;
  /**
   * Whether this process has offered the stored event `seq` to its listeners, or never will; false
   * while it may still come (with several instances, read from the log while Redis was away).
   */
  delivered(seq: number): boolean;
}

interface HoldState {
  released: boolean;
  /** The organizations whose queues hold this request's events. */
  organizations: Set<string>;
}

interface ScopeListeners {
  wholeScope: Set<EventListener>;
  bySession: Map<string, Set<EventListener>>;
}

const scopeKey = (orgId: string, mode: string) => `${mode}:${orgId}`;

export class LocalEventBus implements EventBus {
  /**
   * `fanOut`: where an event goes once it may be delivered; by default to this process's listeners.
   * With several instances it goes to Redis, which hands it back to every instance (./redisBus.ts);
   * `fannedOut` then says which stored events have come back (by default: every one, at once).
   */
  constructor(
    private readonly fanOut?: (event: BusEvent) => void,
    private readonly fannedOut: (seq: number) => boolean = () => true,
  ) {}

  private readonly everything = new Set<EventListener>();
  private readonly scopes = new Map<string, ScopeListeners>();
  /** Per organization, events not yet delivered because an earlier one's request is still being answered. */
  private readonly waiting = new Map<string, Array<{ event: BusEvent; hold: HoldState | undefined }>>();
  /** The stored events among them. */
  private readonly waitingSeqs = new Set<number>();

  delivered(seq: number): boolean {
    return !this.waitingSeqs.has(seq) && this.fannedOut(seq);
  }

  publish(event: BusEvent): void {
    this.publishUnder(event, undefined);
  }

  private publishUnder(event: BusEvent, hold: HoldState | undefined): void {
    const held = hold !== undefined && !hold.released;
    const queue = this.waiting.get(event.orgId);
    if (!held && !queue) return this.deliver(event);
    if (queue) queue.push({ event, hold });
    else this.waiting.set(event.orgId, [{ event, hold }]);
    if (event.seq !== null) this.waitingSeqs.add(event.seq);
    if (held) hold.organizations.add(event.orgId);
    else this.flush(event.orgId);
  }

  subscribe(listener: EventListener): () => void {
    const entry: EventListener = (event) => listener(event);
    this.everything.add(entry);
    return () => this.everything.delete(entry);
  }

  subscribeTo(scope: EventScope, listener: EventListener): () => void {
    const key = scopeKey(scope.orgId, scope.mode);
    let listeners = this.scopes.get(key);
    if (!listeners) this.scopes.set(key, (listeners = { wholeScope: new Set(), bySession: new Map() }));
    let set = listeners.wholeScope;
    if (scope.sessionId !== undefined) {
      const existing = listeners.bySession.get(scope.sessionId);
      if (existing) set = existing;
      else listeners.bySession.set(scope.sessionId, (set = new Set()));
    }
    const entry: EventListener = (event) => listener(event);
    const subscribed = set;
    subscribed.add(entry);
    return () => {
      if (!subscribed.delete(entry)) return;
      const current = this.scopes.get(key);
      if (!current) return;
      if (scope.sessionId !== undefined && !subscribed.size) current.bySession.delete(scope.sessionId);
      if (!current.wholeScope.size && !current.bySession.size) this.scopes.delete(key);
    };
  }

  hold(): PublicationHold {
    const state: HoldState = { released: false, organizations: new Set() };
    const events: EventBus = {
      publish: (event) => this.publishUnder(event, state),
      subscribe: (listener) => this.subscribe(listener),
      subscribeTo: (scope, listener) => this.subscribeTo(scope, listener),
      hold: () => this.hold(),
      delivered: (seq) => this.delivered(seq),
    };
    return {
      events,
      release: () => {
        if (state.released) return;
        state.released = true;
        for (const orgId of state.organizations) this.flush(orgId);
      },
    };
  }

  /** Delivers an organization's waiting events from the oldest, up to the first still held. */
  private flush(orgId: string): void {
    const queue = this.waiting.get(orgId);
    if (!queue) return;
    while (queue.length && (queue[0].hold === undefined || queue[0].hold.released)) {
      const { event } = queue.shift()!;
      if (event.seq !== null) this.waitingSeqs.delete(event.seq);
      this.deliver(event);
    }
    if (!queue.length) this.waiting.delete(orgId);
  }

  private deliver(event: BusEvent): void {
    if (this.fanOut) this.fanOut(event);
    else this.deliverHere(event);
  }

  /** Offers an event to this process's listeners (made here, or heard from another instance). */
  deliverHere(event: BusEvent): void {
    for (const listener of this.everything) listener(event);
    const listeners = this.scopes.get(scopeKey(event.orgId, event.mode));
    if (!listeners) return;
    for (const listener of listeners.wholeScope) listener(event);
    if (event.sessionId === null) return;
    const session = listeners.bySession.get(event.sessionId);
    if (session) for (const listener of session) listener(event);
  }
}
