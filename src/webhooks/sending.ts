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

/** A failed request's error: Node's system errors name the address tried; several tries (IPv6 and IPv4) come as an AggregateError. */
type ConnectionError = NodeJS.ErrnoException & { address?: string; errors?: ConnectionError[] };

const NETWORK_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'refused the connection',
  ECONNRESET: 'closed the connection without an answer',
  ETIMEDOUT: 'did not accept the connection in time',
  EHOSTUNREACH: 'is unreachable',
  ENETUNREACH: 'is unreachable',
  ENOTFOUND: 'does not resolve',
  EAI_AGAIN: 'could not be resolved (DNS failed for now)',
};

/**
 * Why an attempt got no answer, as the endpoint's owner sees it: naming the URL's host and never an
 * address the name resolved to (that would map the server's network for whoever registers a URL).
 */
function failureText(err: ConnectionError, host: string): string {
  const tries = [err, ...(err.errors ?? [])];
  const code = tries.find((each) => each.code)?.code;
  if (code && NETWORK_FAILURES[code]) return `${code}: ${host} ${NETWORK_FAILURES[code]}`;
  let text = err.message || tries.map((each) => each.message).find(Boolean) || 'the request failed';
  for (const address of tries.map((each) => each.address).filter((address): address is string => !!address)) text = text.split(address).join(host);
  return code ? `${code}: ${text}` : text;
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
    request.on('error', (err: ConnectionError) => {
      const reason = signal.aborted && !stopping.aborted ? `no answer within ${timeoutMs} ms` : failureText(err, url.hostname);
      resolve({ error: reason.slice(0, 500) });
    });
    request.end(body);
  });
}
