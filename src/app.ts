import express from 'express';
import type { AppContext } from './appContext.js';
import { publicCors } from './http/cors.js';
import { errorHandler } from './http/errorHandler.js';
import { requestLog } from './http/requestLog.js';
import { operationsRouter } from './http/router.js';
import { noSniff } from './http/securityHeaders.js';
import { twilioWebhooksRouter } from './http/twilioWebhooks.js';
import { callPageRouter } from './web/callPage.js';
import { chatPageRouter } from './web/chatPage.js';
import { docsRouter } from './web/docs.js';

export function createApp(app: AppContext): express.Express {
  const server = express();
  server.disable('x-powered-by');
  // The same rule as per-address limits use (FailedAttempts.addressOf): X-Forwarded-For only from
  // the configured number of proxies, so req.ip and req.protocol cannot be set by a client.
  server.set('trust proxy', app.config.trustProxyHops);
  server.use(requestLog(app.logger));
  server.use(noSniff());
  server.use(publicCors());
  server.use(docsRouter());
  server.use(chatPageRouter());
  server.use(twilioWebhooksRouter(app));
  server.use(callPageRouter());
  server.use(operationsRouter(app));
  server.use(errorHandler(app.logger));
  return server;
}
