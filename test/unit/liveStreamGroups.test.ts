import { describe, expect, it } from 'vitest';
import { LocalEventBus } from '../../src/events/bus.js';
import type { BusEvent } from '../../src/events/types.js';
import { LiveStreamGroups } from '../../src/http/liveStreamGroups.js';
import type { OutboxStream } from '../../src/http/sseOutbox.js';
import type { EventStream } from '../../src/events/stream.js';

const event = (id: string, orgId = 'org_a'): BusEvent => ({
  payload: { id, type: 'session.updated', created_at: '', livemode: false, metadata: {}, data: {} },
  orgId,
  mode: 'test',
  sessionId: null,
  callId: null,
  seq: null,
});
const target = () => ({}) as OutboxStream;
const everything = () => true;
const asStored = (e: BusEvent) => e.payload;
const stream = (overrides: Partial<EventStream> = {}): EventStream => ({
  scope: { orgId: 'org_a', mode: 'test' },
  accept: everything,
  present: asStored,
  holder: { id: 'h', limit: 10, refusal: () => new Error('full') as never },
  heartbeatMs: 1000,
  ...overrides,
});

/** Groups over a bus, recording each delivery as [event id, how many members it went to]. */
function setUp() {
  const bus = new LocalEventBus();
  const deliveries: Array<[string, number]> = [];
  const groups = new LiveStreamGroups(bus, (e, _stream, members) => deliveries.push([e.payload.id, members.size]));
  return { bus, deliveries, groups };
}

describe('LiveStreamGroups', () => {
  it('offers each event once to the streams of one scope that show it the same way', () => {
    const { bus, deliveries, groups } = setUp();
    const members = [target(), target(), target()];
    for (const member of members) groups.join(stream(), member);
    bus.publish(event('1'));
    bus.publish(event('2', 'org_b'));
    expect(deliveries).toEqual([['1', 3]]);
    expect(groups.size()).toBe(1);
  });

  it('keeps streams apart that differ in scope, choice, presentation or naming', () => {
    const { groups } = setUp();
    groups.join(stream(), target());
    groups.join(stream({ scope: { orgId: 'org_a', mode: 'live' } }), target());
    groups.join(stream({ scope: { orgId: 'org_a', mode: 'test', sessionId: 'ses_1' } }), target());
    groups.join(stream({ accept: (e) => e.payload.type !== 'session.typing' }), target());
    groups.join(stream({ present: (e) => ({ ...e.payload, metadata: {} }) }), target());
    groups.join(stream({ unnamed: true }), target());
    expect(groups.size()).toBe(6);
  });

  it('stops listening when its last member leaves; a member leaving twice changes nothing; a later stream starts a new group', () => {
    const { bus, deliveries, groups } = setUp();
    const leaveFirst = groups.join(stream(), target());
    const leaveSecond = groups.join(stream(), target());
    leaveFirst();
    leaveFirst();
    bus.publish(event('1'));
    leaveSecond();
    expect(groups.size()).toBe(0);
    bus.publish(event('2'));
    const leaveThird = groups.join(stream(), target());
    leaveFirst();
    bus.publish(event('3'));
    expect(deliveries).toEqual([
      ['1', 1],
      ['3', 1],
    ]);
    leaveThird();
    expect(groups.size()).toBe(0);
  });

  it('groups only streams that decide nothing per event', () => {
    expect(LiveStreamGroups.groupable(stream())).toBe(true);
    expect(LiveStreamGroups.groupable(stream({ endAfter: () => false }))).toBe(false);
  });
});
