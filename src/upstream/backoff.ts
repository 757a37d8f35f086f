// Exponential backoff: how long to wait before the n-th retry of something that keeps failing.

export interface Backoff {
  /** Delay before the first retry; doubles per retry. */
  initialDelayMs: number;
  /** Upper bound of a delay (Infinity: none). */
  maxDelayMs: number;
}

/** The delay before retry number `attempt` (1-based): initial, 2x, 4x, ..., capped at maxDelayMs. */
export function backoffDelay(attempt: number, backoff: Backoff): number {
  return Math.min(backoff.maxDelayMs, backoff.initialDelayMs * 2 ** (Math.max(1, attempt) - 1));
}
