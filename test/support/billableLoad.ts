// Billable requests as a client sends them (each with its own Idempotency-Key), and the money checks
// shared by the money test and the crash test: what the ledger holds must match what was answered.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Knex } from 'knex';
import { expect } from 'vitest';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../src/db/errors.js';
import { requestRefFor } from '../../src/idempotency/idempotency.js';

export type BillableKind = 'translate' | 'message' | 'voice';

export interface LoadTarget {
  url: string;
  /** A live API key and its id (the Idempotency-Key's owner). */
  key: string;
  keyId: string;
  /** An open live session: agent `en`, customer `fi`. */
  sessionId: string;
}

export interface SentRequest {
  kind: BillableKind;
  idempotencyKey: string;
  /** The ledger's `request_ref` for this request. */
  requestRef: string;
  /** The answer's status; null when none came (the connection died with the server). */
  status: number | null;
  body: any;
  send(url: string): Promise<Response>;
}

const recording = readFile(path.join(import.meta.dirname, '../fixtures/audio/speech-3s.wav'));

/** One billable request, `n`-th of its kind in the run called `tag`; not sent yet. */
export function billable(target: LoadTarget, kind: BillableKind, tag: string, n: number): SentRequest {
  const idempotencyKey = `${tag}-${kind}-${n}`;
  const headers = { Authorization: `Bearer ${target.key}`, 'Idempotency-Key': idempotencyKey };
  const json = (path: string, body: unknown) => (url: string) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const send =
    kind === 'translate'
      ? json('/v1/translate', { target: 'fi', text: `The ${tag} translation number ${n} of the load`, source: 'en' })
      : kind === 'message'
        ? json(`/v1/sessions/${target.sessionId}/messages`, {
            sender: 'agent',
            text: `The ${tag} agent message number ${n} about your order`,
            language: 'en',
          })
        : async (url: string) => {
            const form = new FormData();
            form.append('audio', new Blob([new Uint8Array(await recording)], { type: 'audio/wav' }), `${idempotencyKey}.wav`);
            form.append('sender', 'customer');
            return fetch(`${url}/v1/sessions/${target.sessionId}/voice`, { method: 'POST', headers, body: form });
          };
  return { kind, idempotencyKey, requestRef: requestRefFor(`key:${target.keyId}`, idempotencyKey), status: null, body: undefined, send };
}

/** Sends (or sends again) a request and records its answer; a connection that dies leaves status null. */
export async function deliver(request: SentRequest, url: string): Promise<SentRequest> {
  try {
    const res = await request.send(url);
    const text = await res.text();
    request.status = res.status;
    request.body = text ? JSON.parse(text) : undefined;
  } catch {
    request.status = null;
    request.body = undefined;
  }
  return request;
}

/**
 * Delivers as a careful client does: a 503 (the database was busy; Retry-After says when to come back)
 * is sent again, a few times. A loaded machine makes a fresh instance's pool wait.
 */
export async function deliverPatiently(request: SentRequest, url: string, attempts = 5): Promise<SentRequest> {
  for (let attempt = 1; ; attempt++) {
    await deliver(request, url);
    if (request.status !== 503 || attempt === attempts) return request;
    await new Promise((resolve) => setTimeout(resolve, DATABASE_RETRY_AFTER_SECONDS * 1000));
  }
}

export const acknowledged = (request: SentRequest) => request.status !== null && request.status >= 200 && request.status < 300;

/**
 * The money rules after a load on one organization: nothing held any more, the balance never below
 * zero and equal to the sum of the ledger, every charge made once for a request that was sent and paid
 * for something stored (a message, or a translation whose cache entries were written with it) and
 * agreeing with the answer if one was given, every acknowledged message stored, refused requests free.
 */
export async function checkMoney(db: Knex, orgId: string, sent: SentRequest[]): Promise<void> {
  const org = await db('organizations').where({ id: orgId }).first();
  const ledger = await db('ledger_entries').where({ org_id: orgId }).orderBy('id');
  expect(await db('balance_holds').where({ org_id: orgId })).toEqual([]);
  expect(org.held_micros).toBe(0);
  expect(org.balance_micros).toBeGreaterThanOrEqual(0);
  expect(org.balance_micros).toBe(ledger.filter((row) => row.mode === 'live').reduce((sum, row) => sum + row.amount_micros, 0));
  expect(await db('idempotency_keys').where({ state: 'running' })).toEqual([]);

  const byRef = new Map(sent.map((request) => [request.requestRef, request]));
  const charges = ledger.filter((row) => row.kind !== 'credit');
  expect(new Set(charges.map((row) => row.request_ref)).size).toBe(charges.length);
  for (const row of charges) {
    const request = byRef.get(String(row.request_ref).replace(/:voice$/, ''));
    expect(request, `the charge ${row.id} (${row.reference}) belongs to a request that was sent`).toBeDefined();
    expect(request!.status === null || acknowledged(request!), `a ${request!.status} answer was charged`).toBe(true);
    if (request!.kind === 'translate') {
      expect(row).toMatchObject({ kind: 'text', reference: expect.stringMatching(/^translate /) });
      if (acknowledged(request!)) {
        expect(request!.body.characters_billed).toBe(row.quantity);
        expect(Math.round(request!.body.charged * 1e6)).toBe(-row.amount_micros);
      }
      continue;
    }
    const messageId = Number(/^message (\d+)$/.exec(row.reference)?.[1]);
    const message = await db('messages').where({ id: messageId }).first();
    expect(message, `the charge ${row.id} pays for message ${messageId}, which is stored`).toBeDefined();
    expect(message.request_ref).toBe(request!.requestRef);
    expect(row.kind).toBe(row.request_ref.endsWith(':voice') ? 'voice_message' : 'text');
    if (acknowledged(request!)) expect(request!.body.id).toBe(messageId);
  }

  for (const request of sent) {
    const stored = await db('messages').where({ request_ref: request.requestRef }).first();
    if (request.kind !== 'translate' && acknowledged(request)) {
      expect(stored, `acknowledged message ${request.idempotencyKey} is stored`).toMatchObject({ id: request.body.id });
      if (request.kind === 'voice') {
        expect(charges.filter((row) => row.request_ref === `${request.requestRef}:voice`)).toHaveLength(1);
      }
    }
    if (request.status === 402) {
      expect(stored).toBeUndefined();
      expect(charges.filter((row) => row.request_ref.startsWith(request.requestRef))).toEqual([]);
    }
    if (request.kind === 'translate' && acknowledged(request) && request.body.charged > 0) {
      expect(charges.filter((row) => row.request_ref === request.requestRef)).toHaveLength(1);
    }
  }
}
