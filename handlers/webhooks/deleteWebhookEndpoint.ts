import { defineHandler } from '../../src/http/handler.js';
import { deleteEndpoint } from '../../src/webhooks/endpoints.js';

export default defineHandler<'deleteWebhookEndpoint'>(async ({ app, principal, params }) => {
  await deleteEndpoint(app.db, principal, params.webhook_endpoint_id);
  return { status: 204, body: undefined };
});
