// A Redis of the test's own (`redis-server` as a child process on a free port, nothing kept on disk),
// which the test may kill and start again on the same port: never the Redis other tests share.
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './freePort.js';

const REDIS_SERVER_PATH = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';

export interface RedisServer {
  port: number;
  url: string;
  /** Kills it as a crash would (SIGKILL): connections drop, nothing is saved. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty; resolves once it accepts connections. */
  start(): Promise<void>;
}

/** Spawns redis-server on `port` and waits until it says it accepts connections (an early exit fails at once). */
function spawnRedis(port: number): Promise<ChildProcess> {
  const child = spawn(REDIS_SERVER_PATH, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve(child);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('error', (err) => reject(new Error(`${REDIS_SERVER_PATH} did not start (${err.message}); set REDIS_SERVER_PATH`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${output}`)));
  });
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = await spawnRedis(port);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      const dying = child;
      child = null;
      if (!dying || dying.exitCode !== null || dying.signalCode !== null) return;
      const exited = new Promise((resolve) => dying.once('exit', resolve));
      dying.kill('SIGKILL');
      await exited;
    },
    async start() {
      if (child) throw new Error('this Redis is running already');
      child = await spawnRedis(port);
    },
  };
}
