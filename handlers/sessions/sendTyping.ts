import { defineHandler } from '../../src/http/handler.js';
import { announceTyping } from '../../src/sessions/messages.js';
import { findSession } from '../../src/sessions/sessions.js';

export default defineHandler<'sendTyping'>(async ({ app, principal, params, body }) => {
  const session = await findSession(app.db, principal, params.session_id);
  announceTyping(app, session, body.sender, body.author_name);
  return { status: 204, body: undefined };
});
