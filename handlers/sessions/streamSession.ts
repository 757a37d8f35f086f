import { defineHandler, requirePrincipal } from '../../src/http/handler.js';
import { findSession } from '../../src/sessions/sessions.js';
import { streamSessionEvents } from '../../src/sessions/streams.js';

export default defineHandler<'streamSession'>(async ({ app, principal, params, req, res }) => {
  const caller = requirePrincipal(principal);
  const session = await findSession(app.db, caller, params.session_id);
  await streamSessionEvents(app, caller, session, req, res);
  return { sent: true };
});
