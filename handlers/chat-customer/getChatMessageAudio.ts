import { defineHandler, requireChatSession } from '../../src/http/handler.js';
import { sendRecording } from '../../src/sessions/recordings.js';

export default defineHandler<'getChatMessageAudio'>(async ({ app, params, req, res }) => {
  const session = requireChatSession(req);
  await sendRecording(app.db, session.id, params.message_id, res);
  return { sent: true };
});
