import { defineHandler } from '../../src/http/handler.js';
import { updateEndpoint } from '../../src/webhooks/endpoints.js';

export default defineHandler<'updateWebhookEndpoint'>(async ({ app, principal, params, body }) => ({
  status: 200,
  body: await updateEndpoint(app, principal, params.webhook_endpoint_id, body),
}));
