import { defineHandler } from '../../src/http/handler.js';
import { getEndpoint } from '../../src/webhooks/endpoints.js';

export default defineHandler<'getWebhookEndpoint'>(async ({ app, principal, params }) => ({
  status: 200,
  body: await getEndpoint(app, principal, params.webhook_endpoint_id),
}));
