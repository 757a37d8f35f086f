// Members' passwords: argon2id (memory-hard) through @node-rs/argon2, the library's defaults
// (m=19 MiB, t=2, p=1: OWASP's recommended argon2id setting), a random salt per hash.
import { hash, verify } from '@node-rs/argon2';

export const MIN_PASSWORD_LENGTH = 12;

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** A hash of nothing anybody knows: an unknown email is checked against it, so it costs as long as a wrong password. */
let decoy: Promise<string> | undefined;

/**
 * Whether `password` matches `stored`; with `stored` undefined (no such member) the same work is done
 * against a decoy and the answer is false, so the time does not tell whether the email exists.
 */
export async function checkPassword(stored: string | undefined, password: string): Promise<boolean> {
  decoy ??= hash(`decoy ${Math.random()} ${Date.now()}`);
  const phc = stored ?? (await decoy);
  try {
    const matches = await verify(phc, password);
    return stored !== undefined && matches;
  } catch {
    // A malformed stored hash matches nothing.
    return false;
  }
}
