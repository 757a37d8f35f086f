import { defineHandler } from '../../src/http/handler.js';
import { createPasswordReset } from '../../src/members/links.js';

export default defineHandler<'adminCreatePasswordReset'>(async ({ app, params }) => ({
  status: 201,
  body: await createPasswordReset(app.db, app.config.publicBaseUrl, params.org_id, params.member_id, null, app.now()),
}));
