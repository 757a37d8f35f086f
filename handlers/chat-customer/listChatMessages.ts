import { defineHandler } from '../../src/http/handler.js';
import { customerAudioPath, listMessages } from '../../src/sessions/messages.js';
import { sessionForCustomer } from '../../src/sessions/sessions.js';

export default defineHandler<'listChatMessages'>(async ({ app, params, query, req }) => {
  const session = await sessionForCustomer(app.db, params.session_id, req.get('x-chat-key'));
  return {
    status: 200,
    body: await listMessages(app.db, session.id, query.after ?? 0, query.limit ?? 100, customerAudioPath),
  };
});
