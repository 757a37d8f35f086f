import { defineHandler } from '../../src/http/handler.js';
import { createEndpoint } from '../../src/webhooks/endpoints.js';

export default defineHandler<'createWebhookEndpoint'>(async ({ app, principal, body }) => ({
  status: 201,
  body: await createEndpoint(app, principal, body),
}));
