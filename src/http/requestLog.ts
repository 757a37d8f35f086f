import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

const SAFE_REQUEST_ID = /^[\w.:-]{1,100}$/;

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
    // Keys and tokens must never reach the logs.
    redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-call-key"]'],
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
  });
}
