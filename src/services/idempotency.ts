// Stripe-style Idempotency-Key: the first successful answer is stored per key and API key for 24 hours
// and replayed for a retry with the same request; concurrent requests with one key run once.
import { createHash } from 'node:crypto';
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
  work: () => Promise<StoredAnswer>,
): Promise<StoredAnswer & { replayed: boolean }> {
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
    return { status: existing.response_status!, body: parseBody(existing.response_body), replayed: true };
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
      response_body: answer.body === undefined ? null : JSON.stringify(answer.body),
    });
  return { ...answer, replayed: false };
}

const parseBody = (body: string | null) => (body === null ? undefined : JSON.parse(body));

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
