import { defineHandler } from '../../src/http/handler.js';
import { resendDelivery } from '../../src/webhooks/deliveries.js';

export default defineHandler<'resendWebhookDelivery'>(async ({ app, principal, params }) => {
  const delivery = await resendDelivery(app.db, principal, params.webhook_endpoint_id, params.delivery_id, app.now());
  app.webhooks.nudge();
  return { status: 200, body: delivery };
});
