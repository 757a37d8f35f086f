// PKCE (RFC 7636) with S256 only: the code's challenge is BASE64URL(SHA-256(verifier)).
import { createHash, timingSafeEqual } from 'node:crypto';

/** A challenge or verifier: 43 to 128 unreserved characters (RFC 7636 4.1, 4.2). */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * Whether the token request's verifier answers the code's challenge. A code issued without a challenge
 * must not be redeemed with a verifier either (RFC 9700 2.1.1: a downgrade would otherwise pass).
 */
export function verifierMatches(challenge: string | null, verifier: string | null): boolean {
  if (challenge === null) return verifier === null;
  if (verifier === null || !PKCE_VALUE.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
