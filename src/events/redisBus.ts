// The event bus of a deployment of several instances (docs/several-instances.md): an event that may be delivered is
// published on one Redis channel, and every instance (this one included) hands what it hears to its
// own streams and rooms. Each instance hears each event once, so each stream gets it once; one
// publishing connection per instance keeps an instance's events in the order it committed them.
//
// The stored log stays the truth, and Redis may go away. Whenever this instance may have missed what
// Redis carries, it reads the log for the stored events it has not delivered (DeliveredSequences) and
// delivers them in log order, each once:
// - while its subscription is down: at once, then every POLL_MS (its streams still get every
//   instance's events, a little later);
// - once Redis confirms the subscription again: once more, and what Redis brings meanwhile waits until
//   after it, so that each instance's events still arrive in the order it made them;
// - when another instance says that it could not publish (CATCH_UP, which it sends before its next
//   message once it can): once.
// An event made here that is not heard back (this instance is not subscribed, publishing failed, or the
// subscription dropped first) is delivered here, after those made here before it. Ephemeral events
// (typing) are not stored: while Redis is away they reach the streams of the instance that made them only.
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LocalEventBus } from './bus.js';
import { DeliveredSequences } from './deliveredSequences.js';
import { latestSequence, storedEventsWanted } from './log.js';
import type { BusEvent } from './types.js';

/** How often the log is read while Redis may be missing events. */
const POLL_MS = 500;
/** Events read from the log at a time. */
const PAGE = 500;
/** Sent on the channel by an instance that could not publish: the others read the log for what they missed. */
const CATCH_UP = '{"catch_up":true}';

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
  /** Where the stored log is read. */
  db: Knex;
  logger: Logger;
}

export interface RedisEventBus {
  bus: LocalEventBus;
  close(): Promise<void>;
}

export async function startRedisEventBus(options: RedisEventBusOptions): Promise<RedisEventBus> {
  const fanOut = new RedisFanOut(options);
  await fanOut.start();
  return fanOut;
}

class RedisFanOut implements RedisEventBus {
  readonly bus = new LocalEventBus(
    (event) => this.fanOut(event),
    // Before the subscription is confirmed nothing is delivered, and the streams are not open yet.
    (seq) => this.delivered?.has(seq) ?? false,
  );
  /** Known once the subscription is confirmed; what is heard before waits for it. */
  private delivered: DeliveredSequences | null = null;
  /** Redis confirmed the subscription, and it has not dropped since. */
  private subscribed = false;
  /** Counts the subscriptions that dropped: a read begun before a drop does not settle what was missed after it. */
  private drops = 0;
  /** Something Redis carried may not have been heard: the log is read until a read begun while subscribed succeeds. */
  private behind = false;
  private reading: Promise<void> | null = null;
  private readAgain = false;
  /**
   * What Redis brought while the log was being read, or before the subscription was confirmed again
   * (this bus subscribes again on 'ready'): delivered after a read begun while subscribed, so after what
   * the log had.
   */
  private heldBack: BusEvent[] = [];
  /** Events made here and published while subscribed, not yet heard back, by id in the order made. */
  private readonly unheard = new Map<string, BusEvent>();
  private poll: NodeJS.Timeout | null = null;
  /** Publishing failed since CATCH_UP was last sent. */
  private unpublished = false;
  /** Reading the log is failing (the database is away): said once. */
  private readFailing = false;
  private closed = false;

  constructor(private readonly options: RedisEventBusOptions) {}

  async start(): Promise<void> {
    const { subscriber, publisher, channel, db } = this.options;
    subscriber.on('message', this.heard);
    await subscriber.subscribe(channel);
    // Read after subscribing: what is stored later is heard.
    this.delivered = new DeliveredSequences(await latestSequence(db));
    subscriber.on('close', this.subscriptionLost);
    subscriber.on('ready', this.subscriberBack);
    publisher.on('ready', this.publisherBack);
    if (subscriber.status !== 'ready') return this.subscriptionLost();
    this.subscribed = true;
    for (const event of this.heldBack.splice(0)) this.deliverOnce(event);
    if (this.behind) void this.readLog();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.poll) clearTimeout(this.poll);
    const { subscriber, publisher, channel } = this.options;
    subscriber.off('message', this.heard);
    subscriber.off('close', this.subscriptionLost);
    subscriber.off('ready', this.subscriberBack);
    publisher.off('ready', this.publisherBack);
    await this.reading;
    await subscriber.unsubscribe(channel).catch(() => undefined);
  }

  /**
   * Where the local bus sends an event once it may be delivered. Subscribed, this instance hears it back
   * from Redis; if publishing fails or the subscription drops first, it is delivered here, after the
   * events made here before it: this instance's streams get its events in the order it made them.
   */
  private fanOut(event: BusEvent): void {
    if (!this.subscribed) {
      this.deliverOnce(event);
      void this.publish(event);
      return;
    }
    const { id } = event.payload;
    this.unheard.set(id, event);
    void this.publish(event).then((published) => {
      if (!published) this.deliverUnheard(id);
    });
  }

  /** Delivers here the events made here that were not heard back, in the order made: up to `lastId`, or all. */
  private deliverUnheard(lastId?: string): void {
    if (lastId !== undefined && !this.unheard.has(lastId)) return;
    for (const [id, event] of this.unheard) {
      this.unheard.delete(id);
      this.deliverOnce(event);
      if (id === lastId) return;
    }
  }

  private async publish(event: BusEvent): Promise<boolean> {
    // Before the event, on the same connection: the others read what they missed, then hear it.
    if (this.unpublished) {
      this.unpublished = false;
      void this.send(CATCH_UP);
    }
    return this.send(encodeBusEvent(event));
  }

  private async send(message: string): Promise<boolean> {
    try {
      await this.options.publisher.publish(this.options.channel, message);
      return true;
    } catch (err) {
      // Redis is away (told once, src/deployment/redis.ts) or did not answer in time.
      this.options.logger.debug({ err }, 'events: publishing through Redis failed');
      this.unpublished = true;
      return false;
    }
  }

  private readonly heard = (from: string, message: string): void => {
    if (from !== this.options.channel) return;
    if (message === CATCH_UP) {
      this.behind = true;
      void this.readLog();
      return;
    }
    let event: BusEvent;
    try {
      event = decodeBusEvent(message);
    } catch (err) {
      this.options.logger.error({ err }, 'events: an unreadable event on the Redis channel was ignored');
      return;
    }
    this.unheard.delete(event.payload.id);
    if (this.reading || !this.subscribed) this.heldBack.push(event);
    else this.deliverOnce(event);
  };

  private deliverOnce(event: BusEvent): void {
    if (event.seq === null || this.delivered!.add(event.seq)) this.bus.deliverHere(event);
  }

  private readonly subscriptionLost = (): void => {
    // Each failed attempt to reconnect closes again.
    if (!this.subscribed && this.behind) return;
    this.subscribed = false;
    this.drops++;
    this.behind = true;
    this.deliverUnheard();
    void this.readLog();
  };

  private readonly subscriberBack = (): void => {
    if (this.closed) return;
    // Subscribed again here (src/deployment/redis.ts: never by ioredis), confirmed by Redis: what is published from
    // then on is heard, and the log is read for what came before.
    const { subscriber } = this.options;
    subscriber.subscribe(this.options.channel).then(
      () => {
        if (this.closed) return;
        this.subscribed = true;
        void this.readLog();
      },
      (err: unknown) => {
        this.options.logger.debug({ err }, 'events: subscribing again failed');
        // Dropped again, its next 'ready' tries again; still connected (Redis answered late), so does the next poll.
        if (subscriber.status === 'ready') setTimeout(this.subscriberBack, POLL_MS).unref();
      },
    );
  };

  private readonly publisherBack = (): void => {
    if (!this.unpublished) return;
    this.unpublished = false;
    void this.send(CATCH_UP);
  };

  /** Reads the log for what was not delivered and delivers it; one read at a time. */
  private readLog(): Promise<void> {
    // Before start() knows where the log ends, it reads once it does (`behind`).
    if (this.closed || !this.delivered) return Promise.resolve();
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    if (this.poll) clearTimeout(this.poll);
    this.poll = null;
    const drops = this.drops;
    const whileSubscribed = this.subscribed;
    this.reading = this.deliverWanted()
      .then(
        () => {
          if (whileSubscribed && this.subscribed && drops === this.drops) this.behind = false;
          if (this.readFailing) this.options.logger.info('events: reading the stored log works again');
          this.readFailing = false;
        },
        (err: unknown) => {
          if (!this.readFailing) this.options.logger.warn({ err }, 'events: reading the stored log failed; trying again');
          this.readFailing = true;
        },
      )
      .finally(() => {
        this.reading = null;
        if (whileSubscribed) for (const event of this.heldBack.splice(0)) this.deliverOnce(event);
        if (this.readAgain) {
          this.readAgain = false;
          void this.readLog();
        } else if (this.behind && !this.closed) {
          this.poll = setTimeout(() => void this.readLog(), POLL_MS);
          this.poll.unref();
        }
      })
      .catch((err: unknown) => this.options.logger.error({ err }, 'events: delivering what Redis brought meanwhile failed'));
    return this.reading;
  }

  private async deliverWanted(): Promise<void> {
    for (let wanted = this.delivered!.wanted(); ; ) {
      const events = await storedEventsWanted(this.options.db, wanted, PAGE);
      for (const event of events) this.deliverOnce(event);
      if (events.length < PAGE) return;
      wanted = { after: events[events.length - 1]!.seq!, missing: [] };
    }
  }
}
