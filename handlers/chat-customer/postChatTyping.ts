import { defineHandler } from '../../src/http/handler.js';
import { announceTyping } from '../../src/sessions/messages.js';

export default defineHandler<'postChatTyping'>(async ({ app, chat }) => {
  announceTyping(app, chat.session, 'customer', null);
  return { status: 204, body: undefined };
});
