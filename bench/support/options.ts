// The command-line options the benchmarks share.
import type { Backend } from './databases.js';

/** A whole number above zero from a flag, or the fallback when the flag is absent. */
export function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive whole number`);
  return value;
}

/** --db pglite | postgres | both. */
export function backends(raw: string | undefined): Backend[] {
  if (raw === undefined || raw === 'both') return ['pglite', 'postgres'];
  if (raw === 'pglite' || raw === 'postgres') return [raw];
  throw new Error('--db must be pglite, postgres or both');
}

/** One of `allowed` from a flag, or the fallback when the flag is absent. */
export function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  const value = raw ?? fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}
