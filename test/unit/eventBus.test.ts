import { describe, expect, it } from 'vitest';
import { LocalEventBus } from '../../src/events/bus.js';
import type { BusEvent } from '../../src/events/types.js';

const event = (id: string, orgId = 'org_a', mode: 'live' | 'test' = 'test', sessionId: string | null = null): BusEvent => ({
  payload: { id, type: 'session.updated', created_at: '', livemode: mode === 'live', metadata: {}, data: {} },
  orgId,
  mode,
  sessionId,
  callId: null,
  seq: null,
});

describe('LocalEventBus', () => {
  it('offers an event only to its scope: organization and mode, and a session stream only its session', () => {
    const bus = new LocalEventBus();
    const heard: string[] = [];
    bus.subscribeTo({ orgId: 'org_a', mode: 'test' }, (e) => heard.push(`a-test:${e.payload.id}`));
    bus.subscribeTo({ orgId: 'org_a', mode: 'live' }, (e) => heard.push(`a-live:${e.payload.id}`));
    bus.subscribeTo({ orgId: 'org_b', mode: 'test' }, (e) => heard.push(`b-test:${e.payload.id}`));
    bus.subscribeTo({ orgId: 'org_a', mode: 'test', sessionId: 'ses_1' }, (e) => heard.push(`ses_1:${e.payload.id}`));
    bus.subscribe((e) => heard.push(`all:${e.payload.id}`));
    bus.publish(event('1', 'org_a', 'test', 'ses_1'));
    bus.publish(event('2', 'org_a', 'test', 'ses_2'));
    bus.publish(event('3', 'org_b', 'live'));
    expect(heard).toEqual(['all:1', 'a-test:1', 'ses_1:1', 'all:2', 'a-test:2', 'all:3']);
  });

  it('stops offering to an unsubscribed listener', () => {
    const bus = new LocalEventBus();
    const heard: string[] = [];
    const stop = bus.subscribeTo({ orgId: 'org_a', mode: 'test', sessionId: 'ses_1' }, (e) => heard.push(e.payload.id));
    stop();
    stop();
    bus.publish(event('1', 'org_a', 'test', 'ses_1'));
    expect(heard).toEqual([]);
  });

  it('holds events published through a hold until it is released, and keeps each organization in order', () => {
    const bus = new LocalEventBus();
    const heard: string[] = [];
    bus.subscribe((e) => heard.push(e.payload.id));
    const first = bus.hold();
    const second = bus.hold();
    first.events.publish(event('a1'));
    second.events.publish(event('a2'));
    second.events.publish(event('b1', 'org_b'));
    bus.publish(event('a3')); // not held, but behind a1 of the same organization
    expect(heard).toEqual([]);
    second.release();
    expect(heard).toEqual(['b1']);
    first.release();
    expect(heard).toEqual(['b1', 'a1', 'a2', 'a3']);
    // Released: what is published through it now goes out at once.
    first.events.publish(event('a4'));
    expect(heard).toEqual(['b1', 'a1', 'a2', 'a3', 'a4']);
  });
});
