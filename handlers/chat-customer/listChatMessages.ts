import { defineHandler } from '../../src/http/handler.js';
import { listMessages } from '../../src/sessions/messagePages.js';
import { customerAudioPath } from '../../src/sessions/messages.js';

export default defineHandler<'listChatMessages'>(async ({ app, query, chat }) => ({
  status: 200,
  body: await listMessages(app.db, app.presentedMessages, { sessionId: chat.session.id }, query.after ?? 0, query.limit ?? 100, customerAudioPath),
}));
