// The signature of a webhook delivery, as receivers check it (docs/webhooks.md):
// `Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>`,
// one v1 per secret that signs: during a rotation's overlap the new secret's first, then the old one's,
// so a receiver accepts a delivery when any v1 matches the secret it holds (as with Stripe).
// The timestamp is signed with the body, so a captured delivery cannot be replayed outside the
// receiver's window (300 s) nor its body swapped.
import { createHmac, randomBytes } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** A signing secret: `whsec_` and 32 random bytes, base64url. */
export const newWebhookSecret = () => `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

export function signatureHeader(secrets: string[], timestampSeconds: number, body: string): string {
  const signatures = secrets.map((secret) => `v1=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestampSeconds}.${body}`, 'utf8').digest('hex')}`);
  return [`t=${timestampSeconds}`, ...signatures].join(',');
}
