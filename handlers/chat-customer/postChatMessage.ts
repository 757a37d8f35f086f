import { defineHandler } from '../../src/http/handler.js';
import { customerAudioPath, postMessage, presentMessage } from '../../src/sessions/messages.js';
import { sessionForCustomer } from '../../src/sessions/sessions.js';

export default defineHandler<'postChatMessage'>(async ({ app, params, body, req }) => {
  const session = await sessionForCustomer(app.db, params.session_id, req.get('x-chat-key'));
  const { row, voice } = await postMessage(app, session, { ...body, sender: 'customer' }, null);
  return { status: 201, body: presentMessage(row, voice, customerAudioPath) };
});
