// Packages only some work needs (Twilio's SDK, Redis, the audio demuxer, the engines' SDKs) are loaded the
// first time that work comes, not at every start: together they took about half a second of a start.
import { createRequire } from 'node:module';

/** Loads once, on the first call; later calls share the load. */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => (loading ??= load());
}

const requireHere = createRequire(import.meta.url);

/**
 * A CommonJS package needed by synchronous code: required on the first call (the event loop waits for
 * it that once), then kept.
 */
export function requiredOnFirstUse<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireHere(name) as T);
}
