// Members' passwords: argon2id (memory-hard) through @node-rs/argon2, a random salt per hash. A server
// hashes with OWASP's recommended argon2id setting (m=19 MiB, t=2, p=1); a stored hash carries its own
// parameters, so it is checked with those it was made with.
import { hash, verify, type Options } from '@node-rs/argon2';

export const MIN_PASSWORD_LENGTH = 12;

/** argon2id's cost: memory in KiB, passes, lanes. */
export type PasswordHashCost = Required<Pick<Options, 'memoryCost' | 'timeCost' | 'parallelism'>>;

/** OWASP's recommended argon2id setting (the library's defaults): what every server uses unless started otherwise. */
export const OWASP_ARGON2ID: PasswordHashCost = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export interface Passwords {
  hash(password: string): Promise<string>;
  /**
   * Whether `password` matches `stored`; with `stored` undefined (no such member) the same work is done
   * against a decoy and the answer is false, so the time does not tell whether the email exists.
   */
  check(stored: string | undefined, password: string): Promise<boolean>;
}

/**
 * Passwords hashed with argon2id at `cost`. A server takes OWASP's; the tests, which sign in hundreds of times a
 * run, start theirs with the cheapest cost (test/support/testServer.ts): the same code, a thousandth of the work.
 */
export function argon2idPasswords(cost: PasswordHashCost = OWASP_ARGON2ID): Passwords {
  /** A hash of nothing anybody knows, made at the same cost as members' own: an unknown email is checked against it. */
  let decoy: Promise<string> | undefined;
  return {
    hash: (password) => hash(password, cost),
    async check(stored, password) {
      decoy ??= hash(`decoy ${Math.random()} ${Date.now()}`, cost);
      const phc = stored ?? (await decoy);
      try {
        const matches = await verify(phc, password);
        return stored !== undefined && matches;
      } catch {
        // A malformed stored hash matches nothing.
        return false;
      }
    },
  };
}
