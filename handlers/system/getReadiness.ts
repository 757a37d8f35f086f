import { defineHandler } from '../../src/http/handler.js';
import { assertDatabaseReady } from '../../src/services/health.js';

export default defineHandler<'getReadiness'>(async ({ app }) => {
  await assertDatabaseReady(app.db);
  return { status: 200, body: { status: 'ok' } };
});
