// Stripe-style Idempotency-Key: the first successful answer is stored per key and API key for 24 hours
// and replayed for a retry with the same request; concurrent requests with one key run once.
//
// A stored answer may hold secrets shown only once (a call's links carry their keys), and the database
// keeps only hashes of those. So answers are sealed (AES-256-GCM) with a key derived from the caller's
// own credential, which the database does not hold either: only a retry by the same caller opens them.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { errors } from '../errors.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A request still "running" after this long died with its server; its key may be used again. */
export const IDEMPOTENCY_STALE_MS = 5 * 60 * 1000;

export interface StoredAnswer {
  status: number;
  body?: unknown;
}

interface IdempotencyRow {
  principal_key: string;
  idempotency_key: string;
  request_hash: string;
  state: 'running' | 'done';
  response_status: number | null;
  response_body: string | null;
  created_at: Date;
}

/** Key order does not change what a JSON body means, so it must not change the fingerprint. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** What makes two requests "the same": method, path, body, and the bytes of uploaded files. */
export const requestFingerprint = (method: string, path: string, body: unknown, files: Buffer[] = []) =>
  createHash('sha256')
    .update(JSON.stringify([method, path, canonical(body ?? null), files.map(digest)]))
    .digest('hex');

const digest = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The ledger's `request_ref` for work done under an idempotency key. */
export const requestRefFor = (principalKey: string, idempotencyKey: string) =>
  `idem:${createHash('sha256').update(`${principalKey}\n${idempotencyKey}`).digest('hex')}`;

/** The key that seals one stored answer; `credential` is the raw one the request was authenticated with. */
const sealingKey = (credential: string, idempotencyKey: string) =>
  createHmac('sha256', credential).update(`idempotency-answer\n${idempotencyKey}`).digest();

function sealAnswer(body: unknown, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(body), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

function openAnswer(stored: string, key: Buffer): unknown {
  const bytes = Buffer.from(stored, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8'));
}

/** An answer sealed under another credential of the same principal (a rotated token) cannot be replayed. */
function openStoredAnswer(stored: string, key: Buffer): unknown {
  try {
    return openAnswer(stored, key);
  } catch {
    throw errors.invalid([
      {
        loc: ['header', 'Idempotency-Key'],
        msg: 'this Idempotency-Key was used with another credential, so its answer cannot be replayed; use a new key',
        type: 'idempotency_key_reused',
      },
    ]);
  }
}

/**
 * Runs `work` once per (principal, key). A replay returns the stored answer; a different request with
 * the same key is refused (422), as is a second request while the first still runs (409). Only
 * successful answers are stored: a failed request changed nothing, so its retry runs again.
 */
export async function runIdempotently(
  db: Knex,
  principalKey: string,
  idempotencyKey: string,
  fingerprint: string,
  /** Only a request with the same credential can replay the stored answer. */
  credential: string,
  work: () => Promise<StoredAnswer>,
): Promise<StoredAnswer & { replayed: boolean }> {
  const key = sealingKey(credential, idempotencyKey);
  const where = { principal_key: principalKey, idempotency_key: idempotencyKey };
  const claimed = await claim(db, where, fingerprint);
  if (!claimed) {
    const existing = (await db<IdempotencyRow>('idempotency_keys').where(where).first())!;
    if (existing.request_hash !== fingerprint) {
      throw errors.invalid([
        {
          loc: ['header', 'Idempotency-Key'],
          msg: 'this Idempotency-Key was already used for a different request (other path or body); use a new key',
          type: 'idempotency_key_reused',
        },
      ]);
    }
    if (existing.state === 'running') {
      throw errors.conflict('a request with this Idempotency-Key is still being processed; retry it shortly');
    }
    const body = existing.response_body === null ? undefined : openStoredAnswer(existing.response_body, key);
    return { status: existing.response_status!, body, replayed: true };
  }

  let answer: StoredAnswer;
  try {
    answer = await work();
  } catch (err) {
    await db('idempotency_keys').where(where).del();
    throw err;
  }
  await db('idempotency_keys')
    .where(where)
    .update({
      state: 'done',
      response_status: answer.status,
      response_body: answer.body === undefined ? null : sealAnswer(answer.body, key),
    });
  return { ...answer, replayed: false };
}

/** Takes the key for this request: a new row, or one that expired or whose request died. */
async function claim(
  db: Knex,
  where: { principal_key: string; idempotency_key: string },
  fingerprint: string,
): Promise<boolean> {
  const now = Date.now();
  const inserted = await db('idempotency_keys')
    .insert({ ...where, request_hash: fingerprint, state: 'running' })
    .onConflict(['principal_key', 'idempotency_key'])
    .ignore()
    .returning('principal_key');
  if (inserted.length) return true;
  // A single conditional update, so two retries of a dead request cannot both take it over.
  const takenOver = await db('idempotency_keys')
    .where(where)
    .andWhere((q) =>
      q
        .where('created_at', '<', new Date(now - IDEMPOTENCY_TTL_MS))
        .orWhere((running) =>
          running.where({ state: 'running' }).andWhere('created_at', '<', new Date(now - IDEMPOTENCY_STALE_MS)),
        ),
    )
    .update({ request_hash: fingerprint, state: 'running', response_status: null, response_body: null, created_at: db.fn.now() });
  return takenOver > 0;
}

/** Forgets answers older than the 24 hours they are kept for. */
export async function purgeExpiredIdempotencyKeys(db: Knex): Promise<number> {
  return db('idempotency_keys').where('created_at', '<', new Date(Date.now() - IDEMPOTENCY_TTL_MS)).del();
}
