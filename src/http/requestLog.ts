import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { redactHeaders, redactQuery, redactUrl } from '../logging/redact.js';

const SAFE_REQUEST_ID = /^[\w.:-]{1,100}$/;

type Logged = Record<string, unknown>;

/** Request ids (the caller's X-Request-Id when sane, else a new one) and one log line per request. */
export function requestLog(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: (req, res) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      (req as unknown as { requestId: string }).requestId = id;
      return id;
    },
    // Keys, tokens and unlocks never reach the logs: not in headers, not in the URL, not in the query.
    serializers: {
      req: (req: Logged) => ({
        ...req,
        url: typeof req.url === 'string' ? redactUrl(req.url) : req.url,
        query: redactQuery(req.query),
        headers: redactHeaders(req.headers),
      }),
      res: (res: Logged) => ({ ...res, headers: redactHeaders(res.headers) }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
  });
}
