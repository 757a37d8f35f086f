import { defineHandler } from '../../src/http/handler.js';
import { rotateSecret } from '../../src/webhooks/endpoints.js';

export default defineHandler<'rotateWebhookSecret'>(async ({ app, principal, params, body }) => ({
  status: 200,
  body: await rotateSecret(app, principal, params.webhook_endpoint_id, body?.previous_secret_expires_in ?? 0),
}));
