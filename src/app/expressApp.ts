import express from 'express';
import type { AppContext } from '../http/context.js';
import { consoleRouter } from '../console/router.js';
import { applyPublicCors } from '../http/cors.js';
import { errorHandler } from '../http/errorHandler.js';
import { metricsRouter } from '../http/metricsRoute.js';
import { logRequest } from '../http/requestLog.js';
import { operationsRouter, unmatchedOperation } from '../http/router.js';
import { operationTable } from '../../handlers/operations.js';
import { setNoSniff } from '../http/securityHeaders.js';
import { twilioWebhooksRouter } from '../http/twilioWebhooks.js';
import { authorizePageRouter } from '../console/authorizePage.js';
import { callPageRouter } from '../web/callPage.js';
import { chatPageRouter } from '../web/chatPage.js';
import { asyncApiRouter } from '../web/asyncapiDocs.js';
import { docsRouter } from '../web/docs.js';

export function createApp(app: AppContext): express.Express {
  const server = express();
  server.disable('x-powered-by');
  // The contract has no conditional requests (no ETag, no 304 answer): Express would hash every body it
  // sends for an ETag no client was told of, and answer 304 where the contract promises 200.
  server.disable('etag');
  // The same rule as per-address limits use (FailedAttempts.addressOf): X-Forwarded-For only from
  // the configured number of proxies, so req.ip and req.protocol cannot be set by a client.
  server.set('trust proxy', app.config.trustProxyHops);
  // What every request gets, in one layer: its id and log line, nosniff, CORS on the public endpoints.
  server.use((req, res, next) => {
    logRequest(app.logger, app.metrics, req, res);
    setNoSniff(res);
    if (!applyPublicCors(req, res)) next();
  });
  // The operations first: no operation's path is also a page's, and most requests are operations.
  server.use(operationsRouter(app, operationTable));
  server.use(docsRouter(app.config.publicBaseUrl));
  server.use(asyncApiRouter(app));
  server.use(chatPageRouter());
  server.use(consoleRouter(app));
  server.use(metricsRouter(app));
  server.use(twilioWebhooksRouter(app));
  server.use(callPageRouter());
  server.use(authorizePageRouter(app));
  server.use(unmatchedOperation(operationTable));
  server.use(errorHandler(app.logger));
  return server;
}
