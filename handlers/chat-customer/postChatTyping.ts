import { defineHandler } from '../../src/http/handler.js';
import { announceTyping } from '../../src/sessions/messages.js';
import { sessionForCustomer } from '../../src/sessions/sessions.js';

export default defineHandler<'postChatTyping'>(async ({ app, params, req }) => {
  const session = await sessionForCustomer(app.db, params.session_id, req.get('x-chat-key'));
  announceTyping(app.events, session, 'customer', null);
  return { status: 204, body: undefined };
});
