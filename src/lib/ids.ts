import { hash, randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn from the CSPRNG in batches, as crypto.randomUUID does: one call serves about a
// hundred ids (a call per id cost a message post about 20 us in its profile).
const randomPool = Buffer.alloc(4096);
let poolUsed = randomPool.length;
function randomByte(): number {
  if (poolUsed === randomPool.length) {
    randomFillSync(randomPool);
    poolUsed = 0;
  }
  return randomPool[poolUsed++];
}

/** Uniformly random base62 characters (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** An object identifier such as `call_8ZpQ2mW4xYt7LkVn`. */
export const newId = (prefix: string) => `${prefix}_${randomBase62(16)}`;

/** A secret such as an API key: prefix plus 40 random base62 characters (about 238 bits). */
export const newSecret = (prefix: string) => `${prefix}${randomBase62(40)}`;

/** Secrets are random and long, so a fast hash is enough to make a stolen table useless. */
export const hashSecret = (secret: string) => hash('sha256', secret, 'hex');
