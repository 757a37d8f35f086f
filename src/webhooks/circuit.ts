// An endpoint's circuit breaker: after CIRCUIT_OPENS_AFTER failed attempts in a row (any answer but
// 2xx, no answer, a refused connection), its due deliveries are not claimed for a pause of 1 minute,
// doubling with each further failure, at most an hour; when the pause ends one delivery goes as a probe
// (claims allow one attempt in flight while `circuit_open_until` is past), and a success closes the
// circuit. A paused delivery is neither attempted nor failed: it keeps its place and its retry schedule,
// so a receiver that is down costs its own queue a wait, not everyone's workers their slots.

export const CIRCUIT_OPENS_AFTER = 5;
export const CIRCUIT_FIRST_PAUSE_MS = 60_000;
export const CIRCUIT_MAX_PAUSE_MS = 3600_000;

/** Until when an endpoint is paused after `consecutiveFailures` failed attempts in a row, the last at `now`; null: not paused. */
export function circuitOpenUntil(consecutiveFailures: number, now: number): Date | null {
  if (consecutiveFailures < CIRCUIT_OPENS_AFTER) return null;
  return new Date(now + Math.min(CIRCUIT_FIRST_PAUSE_MS * 2 ** (consecutiveFailures - CIRCUIT_OPENS_AFTER), CIRCUIT_MAX_PAUSE_MS));
}
