import { defineHandler } from '../../src/http/handler.js';
import { sendRecording } from '../../src/sessions/recordings.js';
import { sessionForCustomer } from '../../src/sessions/sessions.js';

export default defineHandler<'getChatMessageAudio'>(async ({ app, params, req, res }) => {
  const session = await sessionForCustomer(app.db, params.session_id, req.get('x-chat-key'));
  await sendRecording(app.db, session.id, params.message_id, res);
  return { sent: true };
});
