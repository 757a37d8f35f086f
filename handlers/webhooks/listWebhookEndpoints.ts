import { defineHandler } from '../../src/http/handler.js';
import { listEndpoints } from '../../src/webhooks/endpoints.js';

export default defineHandler<'listWebhookEndpoints'>(async ({ app, principal, query }) => ({
  status: 200,
  body: await listEndpoints(app, principal, query.limit),
}));
