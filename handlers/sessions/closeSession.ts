import { defineHandler } from '../../src/http/handler.js';
import { closeSession } from '../../src/sessions/sessions.js';

export default defineHandler<'closeSession'>(async ({ app, principal, params }) => ({
  status: 200,
  body: await closeSession(app, principal, params.session_id),
}));
