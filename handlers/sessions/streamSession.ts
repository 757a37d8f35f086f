import { defineHandler } from '../../src/http/handler.js';
import { findSession } from '../../src/sessions/sessions.js';
import { sessionEvents } from '../../src/sessions/streams.js';

export default defineHandler<'streamSession'>(async ({ app, principal, params }) => {
  const session = await findSession(app.db, principal, params.session_id);
  return { eventStream: sessionEvents(app, principal, session) };
});
