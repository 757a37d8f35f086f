import { defineHandler } from '../../src/http/handler.js';
import { createApiKey } from '../../src/auth/apiKeys.js';

export default defineHandler<'adminCreateKey'>(async ({ app, params, body }) => ({
  status: 201,
  body: await createApiKey(app.db, params.org_id, body.mode, body.scopes),
}));
