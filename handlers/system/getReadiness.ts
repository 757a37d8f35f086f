import { defineHandler } from '../../src/http/handler.js';
import { errors } from '../../src/errors.js';

export default defineHandler<'getReadiness'>(async ({ app }) => {
  try {
    await app.db.raw('select 1');
  } catch {
    throw errors.unavailable('database unavailable');
  }
  return { status: 200, body: { status: 'ok' } };
});
