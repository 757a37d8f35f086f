import { defineHandler } from '../../src/http/handler.js';
import { listDeliveries } from '../../src/webhooks/deliveries.js';

export default defineHandler<'listWebhookDeliveries'>(async ({ app, principal, params, query }) => ({
  status: 200,
  body: await listDeliveries(app.db, principal, params.webhook_endpoint_id, query),
}));
