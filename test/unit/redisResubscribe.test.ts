// A subscribed Redis connection that drops again right after it reconnected must not end the process:
// ioredis's own SUBSCRIBE after a reconnection is a promise nobody holds, rejected unhandled when the
// connection closes before Redis answers it (seen once in redisOutage.db.test.ts). src/deployment/redis.ts leaves
// subscribing again to the connection's users. A fake Redis here drops every connection that sends
// SUBSCRIBE after the first.
import net from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { connectRedis, type RedisConnections } from '../../src/deployment/redis.js';

/** The commands of RESP arrays in `data` (enough for what ioredis sends). */
function commandsIn(data: string): string[][] {
  const commands: string[][] = [];
  const lines = data.split('\r\n');
  for (let at = 0; at < lines.length; at++) {
    if (!lines[at]!.startsWith('*')) continue;
    const count = Number(lines[at]!.slice(1));
    const parts: string[] = [];
    for (let i = 0; i < count; i++) parts.push(lines[at + 2 + i * 2]!);
    commands.push(parts);
    at += count * 2;
  }
  return commands;
}

const bulk = (text: string) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

/** A Redis that answers what a connection needs, and drops a connection that subscribes once it has dropped them all. */
function fakeRedis() {
  const sockets = new Set<net.Socket>();
  let dropSubscribers = false;
  const seen: string[] = [];
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.on('data', (data) => {
      for (const [name, ...args] of commandsIn(data.toString('utf8'))) {
        const command = name!.toUpperCase();
        seen.push(command);
        if (command === 'INFO') socket.write(bulk('# Server\r\nloading:0\r\n'));
        else if (command === 'PING') socket.write('+PONG\r\n');
        else if (command === 'SUBSCRIBE' && dropSubscribers) socket.destroy();
        else if (command === 'SUBSCRIBE') args.forEach((channel, i) => socket.write(`*3\r\n${bulk('subscribe')}${bulk(channel)}:${i + 1}\r\n`));
        else socket.write('+OK\r\n');
      }
    });
  });
  return {
    seen,
    listen: () => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port))),
    /** Drops every connection; those that subscribe after it are dropped too. */
    dropAll() {
      dropSubscribers = true;
      for (const socket of sockets) socket.destroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('subscribed Redis connections after a reconnection', () => {
  let redis: RedisConnections | undefined;
  let fake: ReturnType<typeof fakeRedis> | undefined;
  afterEach(async () => {
    await redis?.close();
    fake?.dropAll();
    await fake?.close();
  });

  it('are not subscribed again behind their users’ backs, so a connection that drops again rejects nothing unhandled', async () => {
    fake = fakeRedis();
    const port = await fake.listen();
    redis = await connectRedis({ url: `redis://127.0.0.1:${port}`, prefix: 't:', connectTimeoutMs: 5_000, commandTimeoutMs: 60_000 }, pino({ level: 'silent' }));
    await redis.subscriber.subscribe('events');
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const subscriber = redis.subscriber;
      const back = new Promise<void>((resolve) => subscriber.once('ready', () => resolve()));
      fake.dropAll();
      await back;
      // Answered after anything ioredis sent on reconnecting (a SUBSCRIBE would have dropped the connection first).
      await subscriber.call('PING').catch(() => undefined);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', record);
    }
    expect(unhandled).toEqual([]);
    expect(fake.seen.filter((command) => command === 'SUBSCRIBE')).toHaveLength(1);
  });
});
