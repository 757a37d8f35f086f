import { defineHandler } from '../../src/http/handler.js';
import { assertReady } from '../../src/services/health.js';

export default defineHandler<'getReadiness'>(async ({ app }) => {
  await assertReady(app.db, app.draining);
  return { status: 200, body: { status: 'ok' } };
});
