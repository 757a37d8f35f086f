import { defineHandler } from '../../src/http/handler.js';
import { customerAudioPath, postMessage, presentMessage } from '../../src/sessions/messages.js';

export default defineHandler<'postChatMessage'>(async ({ app, body, chat }) => {
  const { row, voice } = await postMessage(app, chat.session, { ...body, sender: 'customer' }, null);
  return { status: 201, body: presentMessage(row, voice, customerAudioPath) };
});
