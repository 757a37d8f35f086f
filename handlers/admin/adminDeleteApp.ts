import { defineHandler } from '../../src/http/handler.js';
import { deleteApp } from '../../src/oauth/apps.js';

export default defineHandler<'adminDeleteApp'>(async ({ app, params }) => {
  await deleteApp(app, params.client_id);
  return { status: 204, body: undefined };
});
