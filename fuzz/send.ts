// Sends one request exactly as built (no URL normalisation, headers as given) and reads the answer.
import http from 'node:http';
import type { FuzzRequest } from './requests.js';

export type Outcome =
  | { kind: 'answer'; status: number; detail: string }
  | { kind: 'no answer'; reason: string };

/** What of an answer the report shows; event streams are read up to their headers only. */
const BODY_BYTES_KEPT = 2_000;

export function send(base: URL, request: FuzzRequest, agent: http.Agent, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    let req: http.ClientRequest;
    try {
      req = http.request({
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.path,
        headers: request.headers,
        agent,
      });
    } catch (err) {
      // The request could not even be written (Node refuses it): nothing reached the server.
      resolve({ kind: 'no answer', reason: `not sendable: ${(err as Error).message}` });
      return;
    }
    const timer = setTimeout(() => {
      settle({ kind: 'no answer', reason: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (err) => settle({ kind: 'no answer', reason: err.message }));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        settle({ kind: 'answer', status, detail: '(event stream)' });
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let length = 0;
      res.on('data', (chunk: Buffer) => {
        if (length < BODY_BYTES_KEPT) chunks.push(chunk);
        length += chunk.length;
      });
      res.on('error', () => settle({ kind: 'answer', status, detail: '(answer cut off)' }));
      res.on('end', () => settle({ kind: 'answer', status, detail: Buffer.concat(chunks).subarray(0, BODY_BYTES_KEPT).toString('utf8') }));
    });
    req.end(request.body);
  });
}
