import { defineHandler } from '../../src/http/handler.js';
import { findEndpoint, presentEndpoint } from '../../src/webhooks/endpoints.js';

export default defineHandler<'getWebhookEndpoint'>(async ({ app, principal, params }) => ({
  status: 200,
  body: presentEndpoint(await findEndpoint(app.db, principal, params.webhook_endpoint_id)),
}));
