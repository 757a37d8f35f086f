import { defineHandler, requirePrincipal } from '../../src/http/handler.js';
import { closeSession } from '../../src/sessions/sessions.js';

export default defineHandler<'closeSession'>(async ({ app, principal, params }) => ({
  status: 200,
  body: await closeSession(app, requirePrincipal(principal), params.session_id),
}));
