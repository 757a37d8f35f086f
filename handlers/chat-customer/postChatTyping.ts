import { defineHandler, requireChatSession } from '../../src/http/handler.js';
import { announceTyping } from '../../src/sessions/messages.js';

export default defineHandler<'postChatTyping'>(async ({ app, req }) => {
  const session = requireChatSession(req);
  announceTyping(app.events, session, 'customer', null);
  return { status: 204, body: undefined };
});
