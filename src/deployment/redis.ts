// The Redis connections of an instance that shares its deployment (docs/several-instances.md): one for commands
// (rate limits, publishing events, media leases and relays), one subscribed to the events' channel, and
// one to this instance's media channel. The media bridge's messages are mostly binary audio, 50 a second
// per relayed socket: on a connection of their own, the events' subscriber neither decodes them as text
// nor waits behind them. Keys and channels carry REDIS_PREFIX, so deployments may share a Redis.
//
// Redis may go away and come back while the instance serves. Commands then fail at once (no offline
// queue) or within the command timeout (a Redis that hangs), never wait; the instance serves degraded
// meanwhile: rate limits count on each instance (src/ratelimit/fallbackStore.ts), events are followed
// from the stored log (src/events/redisBus.ts), rooms stay where they are (src/calls/media/transports/
// bridge/redisBridge.ts), and /readyz says so. One warning when Redis goes away, one line when it is back.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** The longest wait between two attempts to reconnect: every instance is connected again this long after Redis is back. */
export const RECONNECT_AT_MOST_EVERY_MS = 2_000;

/** Whether Redis answers, as the instance's connections see it; told once per change. */
export interface RedisAvailability {
  /** Every connection is up. */
  readonly available: boolean;
  /** Calls `listener` each time Redis goes away (false) or is back (true); returns how to stop. */
  onChange(listener: (available: boolean) => void): () => void;
}

export interface RedisConnections extends RedisAvailability {
  commands: Redis;
  /** Subscribed to the events' channel (src/events/redisBus.ts). */
  subscriber: Redis;
  /** Subscribed to this instance's media channel (src/calls/media/transports/bridge/redisBridge.ts). */
  mediaSubscriber: Redis;
  prefix: string;
  close(): Promise<void>;
}

/**
 * Whether a command sent on `client` goes out now. False while Redis is away, from the moment its socket
 * ended (ioredis notices, and src/deployment/redis.ts tells the outage, when it closes a moment later).
 */
export function connected(client: Redis): boolean {
  return client.status === 'ready' && client.stream?.writable === true;
}

export interface RedisSettings {
  url: string;
  prefix: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
}

export async function connectRedis({ url, prefix, connectTimeoutMs, commandTimeoutMs }: RedisSettings, logger: Logger): Promise<RedisConnections> {
  // Loaded only by instances that share a deployment (REDIS_URL).
  const { Redis } = await import('ioredis');
  // A subscribed connection is subscribed again by its user on 'ready' (src/events/redisBus.ts, the media
  // bridge), never by ioredis: its own SUBSCRIBE after a reconnection is a promise nobody holds, and a
  // connection that drops again before Redis answers it rejects that promise unhandled, which ends the
  // process.
  const open = ({ subscribed = false } = {}) =>
    new Redis(url, {
      lazyConnect: true,
      autoResubscribe: !subscribed,
      connectTimeout: connectTimeoutMs,
      commandTimeout: commandTimeoutMs,
      // A command in flight when the connection drops fails after the first reconnection attempt.
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      // Keep trying in the background.
      retryStrategy: (attempt) => Math.min(attempt * 200, RECONNECT_AT_MOST_EVERY_MS),
    });
  const commands = open();
  const subscriber = open({ subscribed: true });
  const mediaSubscriber = open({ subscribed: true });
  const all = [commands, subscriber, mediaSubscriber];
  try {
    await Promise.all(all.map((client) => client.connect()));
  } catch (err) {
    for (const client of all) client.disconnect();
    throw new Error(`REDIS_URL: Redis did not answer (${(err as Error).message}); several instances share rate limits and events through it`);
  }

  const listeners = new Set<(available: boolean) => void>();
  const up = new Map<Redis, boolean>(all.map((client) => [client, true]));
  let available = true;
  let closing = false;
  const update = (client: Redis, isUp: boolean) => {
    if (closing) return;
    up.set(client, isUp);
    const now = [...up.values()].every(Boolean);
    if (now === available) return;
    available = now;
    if (available) logger.info('redis: back; rate limits and events are shared through it again');
    else {
      logger.warn(
        'redis: unreachable; still serving: rate limits count on each instance, events reach streams from the stored log, ' +
          'sockets relayed between instances pause (calls whose sockets are on their room\'s instance go on); retrying',
      );
    }
    for (const listener of listeners) listener(available);
  };
  for (const client of all) {
    // Every failed attempt to reconnect reports an error: the outage is told once, by `update`.
    client.on('error', (err: Error) => logger.debug({ err }, 'redis: connection error'));
    client.on('close', () => update(client, false));
    client.on('ready', () => update(client, true));
  }
  return {
    commands,
    subscriber,
    mediaSubscriber,
    prefix,
    get available() {
      return available;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: async () => {
      closing = true;
      listeners.clear();
      await Promise.allSettled(all.map((client) => client.quit()));
    },
  };
}
