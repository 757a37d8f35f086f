import { defineHandler } from '../../src/http/handler.js';
import { issueTokens } from '../../src/oauth/tokenEndpoint.js';

export default defineHandler<'createOAuthToken'>(async ({ app, body, clientAuthorization }) => ({
  status: 200,
  body: await issueTokens(app, clientAuthorization, body),
  headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
}));
