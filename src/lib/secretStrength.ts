// How much guessing a secret chosen by a person (ADMIN_TOKEN) would withstand, estimated from the text.

/** What an operator-chosen admin token must reach. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;
export const ADMIN_TOKEN_MIN_BITS = 128;

const CLASSES: Array<{ size: number; test: RegExp }> = [
  { size: 26, test: /[a-z]/ },
  { size: 26, test: /[A-Z]/ },
  { size: 10, test: /[0-9]/ },
  { size: 33, test: /[^a-zA-Z0-9]/ },
];

/**
 * Bits an attacker who knows the usual shortcuts must guess. Each character is worth log2 of the
 * alphabet its classes span (lower, upper, digits, others), except one that a guesser predicts:
 * repeating the step from its predecessor (`aaaa`, `abcd`, `1357`) or continuing a three-character
 * run already seen (`passwordpassword`); those are worth nothing. A random token loses a few bits
 * to chance runs; a typed pattern loses nearly all. Dictionary words are not recognised: this
 * refuses careless tokens, it does not prove a phrase random.
 */
export function estimatedBits(secret: string): number {
  const chars = Array.from(secret);
  const pool = CLASSES.filter((c) => chars.some((ch) => c.test.test(ch))).reduce((sum, c) => sum + c.size, 0);
  const perChar = pool > 1 ? Math.log2(pool) : 0;
  const codes = chars.map((ch) => ch.codePointAt(0)!);
  const runsSeen = new Set<string>();
  let bits = 0;
  for (let i = 0; i < chars.length; i++) {
    if (i >= 3) runsSeen.add(chars.slice(i - 3, i).join(''));
    const steps = i >= 2 && codes[i]! - codes[i - 1]! === codes[i - 1]! - codes[i - 2]!;
    const repeatsRun = i >= 2 && runsSeen.has(chars.slice(i - 2, i + 1).join(''));
    if (!steps && !repeatsRun) bits += perChar;
  }
  return bits;
}

/** Why `token` is too weak to guard the admin API, or undefined when it is strong enough. */
export function adminTokenWeakness(token: string): string | undefined {
  const length = Array.from(token).length;
  const bits = Math.floor(estimatedBits(token));
  if (length >= ADMIN_TOKEN_MIN_LENGTH && bits >= ADMIN_TOKEN_MIN_BITS) return undefined;
  return (
    `ADMIN_TOKEN is too weak (${length} characters, about ${bits} bits estimated): it needs at least ` +
    `${ADMIN_TOKEN_MIN_LENGTH} characters and about ${ADMIN_TOKEN_MIN_BITS} bits, without repeats or sequences; ` +
    'generate one with `openssl rand -base64 32`, or leave ADMIN_TOKEN unset and the server generates one'
  );
}
