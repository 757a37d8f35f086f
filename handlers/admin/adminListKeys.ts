import { defineHandler } from '../../src/http/handler.js';
import { listApiKeys } from '../../src/auth/apiKeys.js';

export default defineHandler<'adminListKeys'>(async ({ app, params }) => ({
  status: 200,
  body: await listApiKeys(app.db, params.org_id),
}));
