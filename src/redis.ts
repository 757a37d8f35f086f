// The Redis connections of an instance that shares its deployment (docs/several-instances.md): one for commands
// (rate limits, publishing events) and one subscribed to the event channel. Keys and channels carry
// REDIS_PREFIX, so deployments may share a Redis. Commands fail at once while Redis is away instead of
// queueing (callers fall back: see src/ratelimit/fallbackStore.ts and src/events/redisBus.ts).
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface RedisConnections {
  commands: Redis;
  subscriber: Redis;
  prefix: string;
  close(): Promise<void>;
}

export async function connectRedis(url: string, prefix: string, logger: Logger, connectTimeoutMs: number): Promise<RedisConnections> {
  // Loaded only by instances that share a deployment (REDIS_URL).
  const { Redis } = await import('ioredis');
  const open = (role: string) => {
    const client = new Redis(url, {
      lazyConnect: true,
      connectTimeout: connectTimeoutMs,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      // Keep trying in the background, at most every 2 s.
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    let down = false;
    client.on('error', (err) => {
      if (!down) logger.warn({ err, role }, 'redis: connection lost; retrying');
      down = true;
    });
    client.on('ready', () => {
      if (down) logger.info({ role }, 'redis: connected again');
      down = false;
    });
    return client;
  };
  const commands = open('commands');
  const subscriber = open('events');
  try {
    await Promise.all([commands.connect(), subscriber.connect()]);
  } catch (err) {
    commands.disconnect();
    subscriber.disconnect();
    throw new Error(`REDIS_URL: Redis did not answer (${(err as Error).message}); several instances share rate limits and events through it`);
  }
  return {
    commands,
    subscriber,
    prefix,
    close: async () => {
      await Promise.allSettled([commands.quit(), subscriber.quit()]);
    },
  };
}
