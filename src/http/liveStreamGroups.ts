// Live event streams that would each do the same work for every event share it. Streams that follow one
// scope, show the same events the same way (the same `accept` and `present`, the same naming) and ask
// nothing per event (no `endAfter`) listen to the bus as one group: an event is offered, checked and
// framed once per group and then queued for each member. A thousand dashboards following one
// organization cost the bus one listener, not a thousand.
import type { EventBus } from '../events/bus.js';
import type { BusEvent } from '../events/types.js';
import type { EventStream } from '../events/stream.js';
import type { OutboxStream } from './sseOutbox.js';

/** What a group does with an event its streams may see: queue it for each member. */
export type GroupDelivery = (event: BusEvent, stream: EventStream, members: ReadonlySet<OutboxStream>) => void;

interface Group {
  members: Set<OutboxStream>;
  stopListening(): void;
}

/** Small numbers for functions, so that a group's key can name the functions its streams share. */
const functionIds = new WeakMap<(...args: never[]) => unknown, number>();
let nextFunctionId = 0;
const functionId = (fn: (...args: never[]) => unknown) => {
  let id = functionIds.get(fn);
  if (id === undefined) functionIds.set(fn, (id = ++nextFunctionId));
  return id;
};

const groupKey = ({ scope, accept, present, unnamed }: EventStream) =>
  `${scope.mode}:${scope.orgId}:${scope.sessionId ?? ''}:${functionId(accept)}:${functionId(present)}:${unnamed ? 'unnamed' : 'named'}`;

export class LiveStreamGroups {
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly events: EventBus,
    private readonly deliver: GroupDelivery,
  ) {}

  /** Whether a stream can be written as part of a group: one that decides nothing per event. */
  static groupable(stream: EventStream): boolean {
    return stream.endAfter === undefined;
  }

  /** Adds `member` (a live stream showing `stream`) to its group; returns how it leaves. */
  join(stream: EventStream, member: OutboxStream): () => void {
    const key = groupKey(stream);
    let group = this.groups.get(key);
    if (!group) {
      const members = new Set<OutboxStream>();
      const stopListening = this.events.subscribeTo(stream.scope, (event) => this.deliver(event, stream, members));
      this.groups.set(key, (group = { members, stopListening }));
    }
    const joined = group;
    joined.members.add(member);
    return () => {
      if (!joined.members.delete(member) || joined.members.size) return;
      joined.stopListening();
      if (this.groups.get(key) === joined) this.groups.delete(key);
    };
  }

  /** Groups listening now (tests). */
  size(): number {
    return this.groups.size;
  }
}
