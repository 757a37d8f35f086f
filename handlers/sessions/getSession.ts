import { defineHandler } from '../../src/http/handler.js';
import { findSession, presentSession } from '../../src/sessions/sessions.js';

export default defineHandler<'getSession'>(async ({ app, principal, params }) => ({
  status: 200,
  body: presentSession(await findSession(app.db, principal, params.session_id)),
}));
