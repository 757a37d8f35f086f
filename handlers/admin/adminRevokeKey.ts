import { defineHandler } from '../../src/http/handler.js';
import { revokeApiKey } from '../../src/auth/apiKeys.js';

export default defineHandler<'adminRevokeKey'>(async ({ app, params }) => {
  await revokeApiKey(app, params.key_id);
  return { status: 204, body: undefined };
});
