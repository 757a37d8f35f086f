import { expect } from 'vitest';
import { EngineError } from '../../src/translation/engine.js';

/** Await a promise that must fail with an EngineError of `engine`, and return the error. */
export async function engineFailure(promise: Promise<unknown>, engine: string): Promise<EngineError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, 'the call should have failed').toBeInstanceOf(EngineError);
  expect((caught as EngineError).engine).toBe(engine);
  return caught as EngineError;
}

/** A URL where nothing listens (a port that was just free). */
export async function deadUrl(): Promise<string> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
