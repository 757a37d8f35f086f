import { expect } from 'vitest';
import { EngineError } from '../../src/translation/engine.js';

/**
 * The per-attempt timeout of an engine talking to a local stand-in: the stand-in answers in milliseconds, a
 * loaded machine can take seconds. Only the tests of the timeout itself set a short one (with a stand-in that
 * hangs on every attempt, so nothing must succeed within it).
 */
export const LOCAL_TIMEOUT_MS = 30_000;

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
