import { defineHandler } from '../../src/http/handler.js';
import { revokeToken } from '../../src/oauth/tokenEndpoint.js';

export default defineHandler<'revokeOAuthToken'>(async ({ app, body, clientAuthorization }) => {
  await revokeToken(app, clientAuthorization, body);
  return { status: 200, body: {} };
});
