import { defineHandler, requireChatSession } from '../../src/http/handler.js';
import { customerAudioPath, listMessages } from '../../src/sessions/messages.js';

export default defineHandler<'listChatMessages'>(async ({ app, query, req }) => {
  const session = requireChatSession(req);
  return {
    status: 200,
    body: await listMessages(app.db, session.id, query.after ?? 0, query.limit ?? 100, customerAudioPath),
  };
});
