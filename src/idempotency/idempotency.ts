// Stripe-style Idempotency-Key: the first successful answer is stored per key and API key for 24 hours
// and replayed for a retry with the same request; concurrent requests with one key run once.
//
// A stored answer may hold secrets shown only once (a call's links carry their keys), and the database
// keeps only hashes of those. So answers are sealed (AES-256-GCM) with a key derived from the caller's
// own credential, which the database does not hold either: only a retry by the same caller opens them.
import { createHmac, hash } from 'node:crypto';
import type { Knex } from 'knex';
import { errors } from '../errors.js';
import { openText, sealText } from '../secrets/sealing.js';
import { prepared } from '../db/prepared.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A request still "running" after this long is taken for dead even if its instance lives (a claim
 * that was never let go of); its key may be used again. Requests that die with their instance are
 * detected sooner, by the instance's lease.
 */
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
  instance_id: string | null;
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
  hash('sha256', JSON.stringify([method, path, canonical(body ?? null), files.map(digest)]), 'hex');

const digest = (data: Buffer) => hash('sha256', data, 'hex');

/** The ledger's `request_ref` for work done under an idempotency key. */
export const requestRefFor = (principalKey: string, idempotencyKey: string) =>
  `idem:${hash('sha256', `${principalKey}\n${idempotencyKey}`, 'hex')}`;

/** The key that seals one stored answer; `credential` is the raw one the request was authenticated with. */
const sealingKey = (credential: string, idempotencyKey: string) =>
  createHmac('sha256', credential).update(`idempotency-answer\n${idempotencyKey}`).digest();

const sealAnswer = (body: unknown, key: Buffer) => sealText(JSON.stringify(body), key);

const openAnswer = (stored: string, key: Buffer): unknown => JSON.parse(openText(stored, key));

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

const reusedKey = () =>
  errors.invalid([
    {
      loc: ['header', 'Idempotency-Key'],
      msg: 'this Idempotency-Key was already used for a different request (other path or body); use a new key',
      type: 'idempotency_key_reused',
    },
  ]);

export interface IdempotentRequest {
  /** The API key (or app) the Idempotency-Key belongs to. */
  principalKey: string;
  idempotencyKey: string;
  fingerprint: string;
  /** Only a request with the same credential can replay the stored answer. */
  credential: string;
  /** The server instance running the request: if it dies, the key is freed for a retry. */
  instanceId: string;
}

/** How many times a claim is tried while other requests with the key come and go (then 409). */
const CLAIM_ATTEMPTS = 20;

/**
 * Runs `work` once per (principal, key). A replay returns the stored answer; a different request with
 * the same key is refused (422), as is a second request while the first still runs (409). Only
 * successful answers are stored: a failed request changed nothing, so its retry runs again. A request
 * whose server instance died is retried, not refused.
 */
export async function runIdempotently(
  db: Knex,
  request: IdempotentRequest,
  work: () => Promise<StoredAnswer>,
): Promise<StoredAnswer & { replayed: boolean }> {
  const key = sealingKey(request.credential, request.idempotencyKey);
  const where = { principal_key: request.principalKey, idempotency_key: request.idempotencyKey };
  const mine = { ...where, instance_id: request.instanceId, state: 'running', request_hash: request.fingerprint };

  const outcome = await claim(db, request);
  if (outcome.kind === 'replay') {
    const { row } = outcome;
    const body = row.response_body === null ? undefined : openStoredAnswer(row.response_body, key);
    return { status: row.response_status!, body, replayed: true };
  }

  let answer: StoredAnswer;
  try {
    answer = await work();
  } catch (err) {
    // Only this attempt's claim: a retry may have taken the key over meanwhile.
    await db('idempotency_keys').where(mine).del();
    throw err;
  }
  await prepared(db('idempotency_keys').where(mine))
    .update({
      state: 'done',
      instance_id: null,
      response_status: answer.status,
      response_body: answer.body === undefined ? null : sealAnswer(answer.body, key),
    });
  return { ...answer, replayed: false };
}

type Claim = { kind: 'run' } | { kind: 'replay'; row: IdempotencyRow };

/**
 * Takes the key for this request, or learns what answers it. Other requests with the key may finish,
 * fail (and let go of the key) or die at any moment, so each step acts on what is there now and the
 * loop ends only with a decision: run, replay, 422 (another request) or 409 (still running).
 */
async function claim(db: Knex, request: IdempotentRequest): Promise<Claim> {
  const where = { principal_key: request.principalKey, idempotency_key: request.idempotencyKey };
  const running = { request_hash: request.fingerprint, state: 'running', instance_id: request.instanceId };
  const stillRunning = () => errors.conflict('a request with this Idempotency-Key is still being processed; retry it shortly');
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const inserted = await prepared(
      db('idempotency_keys')
        .insert({ ...where, ...running })
        .onConflict(['principal_key', 'idempotency_key'])
        .ignore()
        .returning('principal_key'),
    );
    if (inserted.length) return { kind: 'run' };

    const existing = await db<IdempotencyRow>('idempotency_keys').where(where).first();
    if (!existing) continue; // its request failed and let go of the key just now: claim it again
    if (!expired(existing)) {
      if (existing.request_hash !== request.fingerprint) throw reusedKey();
      if (existing.state === 'done') return { kind: 'replay', row: existing };
    }
    // One conditional update, so of several retries of a dead request exactly one takes it over.
    const takenOver = await db('idempotency_keys')
      .where(where)
      .andWhere((q) => claimable(db, q, request.fingerprint))
      .update({ ...running, response_status: null, response_body: null, created_at: db.fn.now() });
    if (takenOver > 0) return { kind: 'run' };
    const now = await db<IdempotencyRow>('idempotency_keys').where(where).first();
    if (now && now.state === 'running' && now.request_hash === request.fingerprint && !expired(now)) throw stillRunning();
  }
  throw stillRunning();
}

const expired = (row: IdempotencyRow) => row.created_at.getTime() < Date.now() - IDEMPOTENCY_TTL_MS;

/**
 * A key may be taken when its answer expired, or when the same request is "running" but can no longer
 * finish: its instance is not alive (lease ran out), or it has run longer than IDEMPOTENCY_STALE_MS.
 */
function claimable(db: Knex, q: Knex.QueryBuilder, fingerprint: string) {
  const now = Date.now();
  return q.where('created_at', '<', new Date(now - IDEMPOTENCY_TTL_MS)).orWhere((dead) =>
    dead
      .where({ state: 'running', request_hash: fingerprint })
      .andWhere((gone) =>
        gone
          .where('created_at', '<', new Date(now - IDEMPOTENCY_STALE_MS))
          .orWhereNull('instance_id')
          .orWhereNotExists((live) => aliveInstance(db, live)),
      ),
  );
}

/** The instance named by the row's `instance_id`, if its lease is current. */
const aliveInstance = (db: Knex, q: Knex.QueryBuilder) =>
  q
    .select(db.raw('1'))
    .from('instances')
    .whereRaw('instances.id = idempotency_keys.instance_id')
    .andWhere('instances.expires_at', '>=', db.fn.now());

/**
 * Frees the keys of requests whose instance is no longer alive, so their retries run. With
 * `soleInstance`, every other instance counts as dead.
 */
export async function forgetRequestsOfDeadInstances(db: Knex, soleInstance?: string): Promise<number> {
  const running = db('idempotency_keys').where({ state: 'running' });
  if (soleInstance) return running.andWhere((q) => q.whereNot({ instance_id: soleInstance }).orWhereNull('instance_id')).del();
  return running.andWhere((q) => q.whereNull('instance_id').orWhereNotExists((live) => aliveInstance(db, live))).del();
}

/** Forgets answers older than the 24 hours they are kept for. */
export async function purgeExpiredIdempotencyKeys(db: Knex): Promise<number> {
  return db('idempotency_keys').where('created_at', '<', new Date(Date.now() - IDEMPOTENCY_TTL_MS)).del();
}
