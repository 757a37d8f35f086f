// Verifying a webhook delivery: `Webhook-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, each v1 the
// lowercase hex HMAC-SHA256 of `${t}.${rawBody}` keyed with the endpoint's secret (`whsec_...`, as UTF-8).
// Several v1 entries let a rotated secret's deliveries verify during the changeover. Node only.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Event } from './events.js';

export type WebhookFailure = 'malformed_header' | 'timestamp_out_of_tolerance' | 'no_matching_signature' | 'malformed_body';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyOptions {
  /** How far the signed time may be from now, either way (default 300 s): older deliveries are replays. */
  toleranceSeconds?: number;
  /** Now, as a Date or unix seconds (default: the clock). */
  now?: Date | number;
}

/** `${t}.${rawBody}` signed with `secret`: what a v1 entry holds (exported for your own tests). */
export function webhookSignature(rawBody: string | Uint8Array, timestamp: number, secret: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestamp}.`)
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
    .digest('hex');
}

function parseHeader(header: string): { timestamp: number; signatures: string[] } {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (at === -1) continue;
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (timestamp === undefined) throw new WebhookVerificationError('malformed_header', 'the signature header has no t=<unix seconds>');
  if (!signatures.length) throw new WebhookVerificationError('malformed_header', 'the signature header has no v1=<hex> signature');
  return { timestamp, signatures };
}

/**
 * The delivered event, once the signature header proves `secret`'s holder sent exactly `rawBody`
 * within the tolerance; otherwise a `WebhookVerificationError`. Pass the body as received (before any
 * JSON parsing): a re-serialized body does not verify.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | null | undefined,
  secret: string,
  { toleranceSeconds = 300, now }: VerifyOptions = {},
): Event {
  if (!signatureHeader) throw new WebhookVerificationError('malformed_header', 'no Webhook-Signature header');
  const { timestamp, signatures } = parseHeader(signatureHeader);
  const nowSeconds = now === undefined ? Date.now() / 1000 : now instanceof Date ? now.getTime() / 1000 : now;
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `the signature's time is more than ${toleranceSeconds} s from now`);
  }
  const expected = Buffer.from(webhookSignature(rawBody, timestamp, secret), 'hex');
  // Every entry is compared, in constant time each, so timing tells nothing about which one matched.
  const matched = signatures.reduce((found, signature) => timingSafeEqual(expected, Buffer.from(signature, 'hex')) || found, false);
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'no signature matches this body and secret');
  try {
    return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')) as Event;
  } catch {
    throw new WebhookVerificationError('malformed_body', 'the signed body is not JSON');
  }
}
