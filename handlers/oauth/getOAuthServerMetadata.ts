import { defineHandler } from '../../src/http/handler.js';
import { serverMetadata } from '../../src/oauth/metadata.js';

export default defineHandler<'getOAuthServerMetadata'>(async ({ app }) => ({
  status: 200,
  body: serverMetadata(app.config),
  headers: { 'Cache-Control': 'public, max-age=3600' },
}));
