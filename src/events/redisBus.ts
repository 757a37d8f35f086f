// The event bus of a deployment of several instances (docs/several-instances.md): an event that may be delivered is
// published on one Redis channel, and every instance (this one included) hands what it hears to its
// own streams and rooms. Each instance hears each event once, so each stream gets it once; one
// publishing connection per instance keeps an instance's events in the order it committed them.
// The stored log stays the truth: a stream that reconnects resumes from it with Last-Event-ID.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LocalEventBus } from './bus.js';
import type { BusEvent } from './types.js';

/** A bus event as it crosses Redis: the payload as the JSON that was stored, the rest as is. */
type WireEvent = Omit<BusEvent, 'payload' | 'payloadJson'> & { payloadJson: string };

export function encodeBusEvent(event: BusEvent): string {
  const { payload, payloadJson, ...rest } = event;
  return JSON.stringify({ ...rest, payloadJson: payloadJson ?? JSON.stringify(payload) } satisfies WireEvent);
}

export function decodeBusEvent(message: string): BusEvent {
  const { payloadJson, ...rest } = JSON.parse(message) as WireEvent;
  return { ...rest, payload: JSON.parse(payloadJson), payloadJson };
}

export interface RedisEventBusOptions {
  /** Publishes (a normal connection). */
  publisher: Redis;
  /** Subscribes (a connection of its own: a subscribed connection does nothing else). */
  subscriber: Redis;
  channel: string;
  logger: Logger;
}

export interface RedisEventBus {
  bus: LocalEventBus;
  close(): Promise<void>;
}

export async function startRedisEventBus({ publisher, subscriber, channel, logger }: RedisEventBusOptions): Promise<RedisEventBus> {
  const bus: LocalEventBus = new LocalEventBus((event) => {
    publisher.publish(channel, encodeBusEvent(event)).catch((err: unknown) => {
      // Redis is away: this instance's streams still get the event; the others' clients catch up
      // from the log when they reconnect.
      logger.warn({ err, event_id: event.payload.id }, 'events: publishing through Redis failed; delivered on this instance only');
      bus.deliverHere(event);
    });
  });
  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    let event: BusEvent;
    try {
      event = decodeBusEvent(message);
    } catch (err) {
      logger.error({ err }, 'events: an unreadable event on the Redis channel was ignored');
      return;
    }
    bus.deliverHere(event);
  });
  await subscriber.subscribe(channel);
  return {
    bus,
    close: async () => {
      await subscriber.unsubscribe(channel).catch(() => undefined);
    },
  };
}
