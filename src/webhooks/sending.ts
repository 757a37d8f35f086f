// One webhook POST: to the address that was checked (src/webhooks/addresses.ts), without following
// redirects, within the attempt's timeout; it never throws, it tells what happened.
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, isPrivateAddress, literalAddress } from './addresses.js';

export type Outcome = { statusCode: number } | { error: string };

export interface SendOptions {
  timeoutMs: number;
  allowPrivateAddresses: boolean;
  /** Aborted when the worker stops: the attempt is dropped, not recorded. */
  stopping: AbortSignal;
}

export function postWebhook(rawUrl: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<Outcome> {
  const url = new URL(rawUrl);
  const { allowPrivateAddresses, timeoutMs, stopping } = options;
  const literal = literalAddress(url.hostname);
  if (!allowPrivateAddresses && literal !== null && isPrivateAddress(literal)) {
    return Promise.resolve({ error: `${literal} is a private or local address; webhooks are not delivered there` });
  }
  const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), stopping]);
  return new Promise<Outcome>((resolve) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      agent: false,
      signal,
      ...(allowPrivateAddresses ? {} : { lookup: guardedLookup }),
    });
    request.on('response', (response) => {
      resolve({ statusCode: response.statusCode ?? 0 });
      // Only the status counts: the answer's body is not read.
      response.destroy();
    });
    request.on('error', (err: NodeJS.ErrnoException) => {
      const reason = signal.aborted && !stopping.aborted ? `no answer within ${timeoutMs} ms` : err.code ? `${err.code}: ${err.message}` : err.message;
      resolve({ error: reason.slice(0, 500) });
    });
    request.end(body);
  });
}
