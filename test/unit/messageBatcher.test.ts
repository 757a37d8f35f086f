// Messages across a thread boundary, posted together per turn of the event loop (src/db/workerThread.ts),
// through a real MessageChannel (real structured clone).
import { MessageChannel } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MessageBatcher } from '../../src/db/workerThread.js';

describe('MessageBatcher', () => {
  const channel = new MessageChannel();
  afterEach(() => channel.port2.removeAllListeners('message'));
  afterAll(() => channel.port1.close());

  const received = (count: number) =>
    new Promise<unknown[][]>((resolve) => {
      const posts: unknown[][] = [];
      channel.port2.on('message', (messages: unknown[]) => {
        posts.push(messages);
        if (posts.flat().length >= count) resolve(posts);
      });
    });

  it("posts what one turn sends as one array, after the turn, in order", async () => {
    const posted: unknown[][] = [];
    const batcher = new MessageBatcher<{ id: number }>((messages) => {
      posted.push(messages);
      channel.port1.postMessage(messages);
    });
    const arriving = received(3);
    for (const id of [1, 2, 3]) batcher.send({ id });
    expect(posted).toEqual([]);
    expect(await arriving).toEqual([[{ id: 1 }, { id: 2 }, { id: 3 }]]);
    expect(posted).toHaveLength(1);
  });

  it('fails only a message that cannot be cloned; the others of its turn still go', async () => {
    const failed: Array<[number, string]> = [];
    const batcher = new MessageBatcher<{ id: number; value?: unknown }>(
      (messages) => channel.port1.postMessage(messages),
      (message, error) => failed.push([message.id, (error as Error).name]),
    );
    const arriving = received(2);
    batcher.send({ id: 1 });
    batcher.send({ id: 2, value: () => 'a function' });
    batcher.send({ id: 3 });
    expect((await arriving).flat()).toEqual([{ id: 1 }, { id: 3 }]);
    expect(failed).toEqual([[2, 'DataCloneError']]);
  });

  it('posts at once on flush', async () => {
    const posted: unknown[][] = [];
    const batcher = new MessageBatcher<number>((messages) => posted.push(messages));
    batcher.send(1);
    batcher.flush();
    expect(posted).toEqual([[1]]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(posted).toEqual([[1]]);
  });

  it('sends one message now, after what waits, and fails only that message if it cannot be cloned', () => {
    const posted: unknown[][] = [];
    const failed: number[] = [];
    const batcher = new MessageBatcher<{ id: number; value?: unknown }>(
      (messages) => {
        channel.port1.postMessage(messages);
        posted.push(messages);
      },
      (message) => failed.push(message.id),
    );
    batcher.send({ id: 1 });
    batcher.sendNow({ id: 2 });
    expect(posted).toEqual([[{ id: 1 }, { id: 2 }]]);
    batcher.sendNow({ id: 3, value: () => 'a function' });
    expect(failed).toEqual([3]);
    expect(posted).toHaveLength(1);
  });
});
