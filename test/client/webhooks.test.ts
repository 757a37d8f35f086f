// The client's webhook verification against signatures computed here with node:crypto, as the pinned
// format says: `Webhook-Signature: t=<unix seconds>,v1=<lowercase hex HMAC-SHA256(secret, `${t}.${body}`)>`.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError, verifyWebhook } from '../../client/src/webhooks.js';

const secret = 'whsec_6b0dQ3v8Zk2pX9mL4tR7wY1nC5hJ0sF3';
const otherSecret = 'whsec_Ot4erS3cretNotThe0ne9aB7cD5eF1gH2';
const event = {
  id: 'evt_2bN8xQ4mK7pL9wR3',
  type: 'call.created',
  created_at: '2026-11-22T10:00:00.000Z',
  livemode: false,
  metadata: { ticket: 4711 },
  data: { id: 'call_8ZpQ2mW4xYt7LkVn', status: 'open', agent_name: 'Äli 🎧' },
};
const body = JSON.stringify(event);
const t = 1_795_000_000;
const sign = (payload: string | Buffer, timestamp: number, key: string) =>
  createHmac('sha256', key).update(`${timestamp}.`).update(payload).digest('hex');

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).reason;
  }
  throw new Error('verified, but should not have');
}

describe('verifyWebhook', () => {
  it('returns the event for a body signed with the secret, as a string or as bytes', () => {
    const header = `t=${t},v1=${sign(body, t, secret)}`;
    expect(verifyWebhook(body, header, secret, { now: t })).toEqual(event);
    expect(verifyWebhook(Buffer.from(body), header, secret, { now: new Date(t * 1000) })).toEqual(event);
  });

  it('accepts any of several v1 entries (a rotated secret) and ignores unknown schemes', () => {
    const header = `t=${t},v0=abc,v1=${sign(body, t, otherSecret)},v1=${sign(body, t, secret)}`;
    expect(verifyWebhook(body, header, secret, { now: t })).toEqual(event);
  });

  it('refuses another secret, a changed body, a re-serialized body, a signature for another time', () => {
    const header = `t=${t},v1=${sign(body, t, secret)}`;
    expect(failure(() => verifyWebhook(body, header, otherSecret, { now: t }))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhook(body.replace('4711', '4712'), header, secret, { now: t }))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhook(JSON.stringify(event, null, 2), header, secret, { now: t }))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhook(body, `t=${t + 1},v1=${sign(body, t, secret)}`, secret, { now: t }))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhook(body, `t=${t},v1=${sign(body, t, secret).toUpperCase()}`, secret, { now: t }))).toBe('malformed_header');
  });

  it('refuses a time outside the tolerance either way, and accepts the edge', () => {
    const header = `t=${t},v1=${sign(body, t, secret)}`;
    expect(verifyWebhook(body, header, secret, { now: t + 300 })).toEqual(event);
    expect(verifyWebhook(body, header, secret, { now: t - 300 })).toEqual(event);
    expect(failure(() => verifyWebhook(body, header, secret, { now: t + 301 }))).toBe('timestamp_out_of_tolerance');
    expect(failure(() => verifyWebhook(body, header, secret, { now: t - 301 }))).toBe('timestamp_out_of_tolerance');
    expect(verifyWebhook(body, header, secret, { now: t + 3_600, toleranceSeconds: 3_600 })).toEqual(event);
  });

  it('refuses a missing or malformed header, and a signed body that is not JSON', () => {
    for (const header of [undefined, null, '', 'v1=abc', `t=${t}`, `t=soon,v1=${sign(body, t, secret)}`, 'garbage']) {
      expect(failure(() => verifyWebhook(body, header, secret, { now: t }))).toBe('malformed_header');
    }
    const notJson = 'not json';
    expect(failure(() => verifyWebhook(notJson, `t=${t},v1=${sign(notJson, t, secret)}`, secret, { now: t }))).toBe('malformed_body');
  });
});
