import { defineHandler, requireChatSession } from '../../src/http/handler.js';
import { customerAudioPath, postMessage, presentMessage } from '../../src/sessions/messages.js';

export default defineHandler<'postChatMessage'>(async ({ app, body, req }) => {
  const session = requireChatSession(req);
  const { row, voice } = await postMessage(app, session, { ...body, sender: 'customer' }, null);
  return { status: 201, body: presentMessage(row, voice, customerAudioPath) };
});
