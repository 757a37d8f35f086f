import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.js';
import { credentialIdOf } from '../auth/principal.js';
import { redactUrl } from '../observability/redact.js';

const SAFE_REQUEST_ID = /^[\w.:-]{1,100}$/;

/**
 * Request ids (the caller's X-Request-Id when sane, else a new one) and one log line per request, written
 * when the response is done (or the client left first). Built on pino directly rather than pino-http:
 * that one serialised every request's headers through several layers of objects, a large part of the
 * cost of a fast request. Credential headers are not logged at all, and secrets in the URL are redacted.
 */
export function logRequest(logger: Logger, metrics: Metrics, req: Request, res: Response): void {
  const started = performance.now();
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  req.requestId = requestId;
  res.setHeader('X-Request-Id', requestId);
  res.once('close', () => {
    const status = res.statusCode;
    const elapsedMs = performance.now() - started;
    const operation = req.operationId ?? 'other';
    metrics.requests.inc({ operation, status });
    metrics.requestSeconds.observe({ operation }, elapsedMs / 1000);
    const level = status >= 500 ? 'error' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    const principal = req.principal;
    logger[level](
      {
        requestId,
        operation: req.operationId,
        // Who asked, by ids only (never a secret): the organization and the key or app connection.
        ...(principal && { org_id: principal.orgId, credential_id: credentialIdOf(principal), ...(principal.kind === 'app' && { app_id: principal.appId }) }),
        req: { method: req.method, url: redactUrl(req.originalUrl), remoteAddress: req.socket.remoteAddress },
        res: { statusCode: status },
        responseTime: Math.round(elapsedMs),
      },
      res.writableFinished ? 'request completed' : 'request aborted',
    );
  });
}
