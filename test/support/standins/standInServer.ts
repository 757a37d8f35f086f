// The common part of the upstream stand-ins: a real HTTP server on 127.0.0.1 (port 0) that records
// every request it gets and can be scripted to fail (`failNext`) or stall (`hang`) before its own
// handler answers in the upstream's wire format.

import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON, or the form fields (repeated fields as arrays), or undefined. */
  body: unknown;
  /** Form fields as sent (repeated names kept), for form-urlencoded bodies. */
  form?: URLSearchParams;
}

export interface StandInAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type StandInHandler = (request: RecordedRequest) => StandInAnswer | Promise<StandInAnswer>;

interface ScriptedFailure {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface StandInServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request received, in order (scripted failures and hangs included). */
  readonly requests: RecordedRequest[];
  /** Answer the next `count` requests with this status (and body/headers) instead of the handler. */
  failNext(count: number, status: number, body?: unknown, headers?: Record<string, string>): void;
  /** Hold the next `count` requests for `ms` before answering (use more than the client's timeout). */
  hang(ms: number, count?: number): void;
  /** Forget recorded requests and scripted failures. */
  reset(): void;
  close(): Promise<void>;
}

export async function startStandInServer(
  handler: StandInHandler,
  defaultErrorBody: (status: number) => unknown,
): Promise<StandInServer> {
  const requests: RecordedRequest[] = [];
  let failures: ScriptedFailure[] = [];
  let hangs: number[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const send = (res: ServerResponse, answer: StandInAnswer) => {
    if (res.destroyed || res.writableEnded) return;
    const headers: Record<string, string> = { ...(answer.headers ?? {}) };
    let payload = '';
    if (answer.body !== undefined) {
      if (typeof answer.body === 'string') {
        payload = answer.body;
        headers['content-type'] ??= 'text/plain; charset=utf-8';
      } else {
        payload = JSON.stringify(answer.body);
        headers['content-type'] ??= 'application/json';
      }
    }
    res.writeHead(answer.status, headers);
    res.end(payload);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const url = new URL(req.url ?? '/', 'http://stand-in');
        const contentType = String(req.headers['content-type'] ?? '');
        const recorded: RecordedRequest = {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          rawBody,
          body: undefined,
        };
        if (contentType.includes('application/json')) {
          try {
            recorded.body = JSON.parse(rawBody);
          } catch {
            recorded.body = undefined;
          }
        } else if (contentType.includes('application/x-www-form-urlencoded')) {
          const form = new URLSearchParams(rawBody);
          recorded.form = form;
          const fields: Record<string, string | string[]> = {};
          for (const key of new Set(form.keys())) {
            const values = form.getAll(key);
            fields[key] = values.length > 1 ? values : values[0]!;
          }
          recorded.body = fields;
        }
        requests.push(recorded);

        const hangMs = hangs.shift();
        if (hangMs !== undefined) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              timers.delete(timer);
              resolve();
            }, hangMs);
            timers.add(timer);
            res.on('close', () => {
              clearTimeout(timer);
              timers.delete(timer);
              resolve();
            });
          });
          if (res.destroyed) return;
        }
        const failure = failures.shift();
        if (failure) {
          send(res, {
            status: failure.status,
            body: failure.body === undefined ? defaultErrorBody(failure.status) : failure.body,
            headers: failure.headers,
          });
          return;
        }
        try {
          send(res, await handler(recorded));
        } catch (error) {
          send(res, { status: 500, body: defaultErrorBody(500), headers: { 'x-stand-in-error': String(error) } });
        }
      })();
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    failNext(count, status, body, headers) {
      for (let i = 0; i < count; i++) failures.push({ status, body, headers });
    },
    hang(ms, count = 1) {
      for (let i = 0; i < count; i++) hangs.push(ms);
    },
    reset() {
      requests.length = 0;
      failures = [];
      hangs = [];
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** The stand-ins' shared fake translation: glossary terms replaced (whole word, any case), then `<target>:` + text. */
export function fakeTranslate(text: string, target: string, glossary: Record<string, string> = {}): string {
  let result = text;
  const terms = Object.keys(glossary).sort((a, b) => b.length - a.length);
  for (const term of terms) {
    const escaped = term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const rendering = glossary[term]!;
    result = result.replace(new RegExp(`(?<![\\p{L}\\p{N}_])${escaped}(?![\\p{L}\\p{N}_])`, 'giu'), () => rendering);
  }
  return `${target}:${result}`;
}

/** The stand-ins' shared fake detection: Finnish when the text has ä or ö, else English. */
export function fakeDetect(text: string): string {
  return /[äöÄÖ]/.test(text) ? 'fi' : 'en';
}
