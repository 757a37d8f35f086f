// One small retry helper for engines reached with plain fetch (LibreTranslate): retries what is safe
// to retry (429, 5xx, network errors, timeouts) with exponential backoff, never other 4xx.

import { EngineError } from '../engine.js';
import { backoffDelay } from '../../upstream/backoff.js';
import { attempts, errorMessage, seconds, shorten } from '../../upstream/failureText.js';

/** A non-2xx answer from the upstream, thrown by an attempt so withRetries can judge it. */
export class UpstreamStatusError extends Error {
  constructor(
    readonly status: number,
    /** The upstream's own message (e.g. LibreTranslate's `{error}`), for the final EngineError. */
    readonly detail: string,
    /** Parsed Retry-After, in milliseconds, when the upstream sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(`upstream answered ${status}${detail ? `: ${detail}` : ''}`);
    this.name = 'UpstreamStatusError';
  }
}

export interface RetryOptions {
  /** Engine name for messages and EngineError.engine. */
  engine: string;
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Per-attempt timeout: the attempt's AbortSignal fires after this long. */
  timeoutMs: number;
  /** First backoff delay; doubles per retry (200 ms, 400 ms, 800 ms, ...). Default 200 ms. */
  baseDelayMs?: number;
  /** Retry-After is honoured up to this long (default 5 s); longer waits are cut to it. */
  maxRetryAfterMs?: number;
  /** For tests: replaces setTimeout-based sleeping. */
  sleep?: (ms: number) => Promise<void>;
}

/** Parse a Retry-After header (delay-seconds or HTTP-date) into milliseconds. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `attempt` until it succeeds, the failure is not retryable, or the retries are used up; the
 * final failure becomes an EngineError naming the status (or the timeout) and the attempt count.
 * `attempt` gets an AbortSignal that times out after `timeoutMs`: pass it to fetch and read the body
 * inside the attempt so a stalled body counts as a timeout too.
 */
export async function withRetries<T>(attempt: (signal: AbortSignal) => Promise<T>, options: RetryOptions): Promise<T> {
  const { engine, maxRetries, timeoutMs } = options;
  const baseDelayMs = options.baseDelayMs ?? 200;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 5_000;
  const sleep = options.sleep ?? defaultSleep;
  for (let attemptNumber = 1; ; attemptNumber++) {
    try {
      return await attempt(AbortSignal.timeout(timeoutMs));
    } catch (error) {
      if (error instanceof EngineError) throw error;
      const status = error instanceof UpstreamStatusError ? error.status : undefined;
      const retryable = status === undefined ? true : isRetryableStatus(status);
      if (!retryable || attemptNumber > maxRetries) {
        throw finalError(engine, error, attemptNumber, timeoutMs);
      }
      const backoff = backoffDelay(attemptNumber, { initialDelayMs: baseDelayMs, maxDelayMs: Infinity });
      const retryAfter = error instanceof UpstreamStatusError ? error.retryAfterMs : undefined;
      await sleep(retryAfter !== undefined ? Math.min(retryAfter, maxRetryAfterMs) : backoff);
    }
  }
}

function finalError(engine: string, error: unknown, attemptCount: number, timeoutMs: number): EngineError {
  if (error instanceof UpstreamStatusError) {
    const detail = error.detail ? `: ${shorten(error.detail)}` : '';
    return new EngineError(engine, `${engine} answered ${error.status} after ${attempts(attemptCount)}${detail}`, error);
  }
  if (isTimeout(error)) {
    return new EngineError(engine, `${engine} did not answer within ${seconds(timeoutMs)} (${attempts(attemptCount)})`, error);
  }
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  return new EngineError(
    engine,
    `${engine} could not be reached after ${attempts(attemptCount)}: ${shorten(errorMessage(error) + cause)}`,
    error,
  );
}
