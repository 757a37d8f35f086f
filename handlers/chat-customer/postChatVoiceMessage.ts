import { defineHandler } from '../../src/http/handler.js';
import { customerAudioPath, presentMessage } from '../../src/sessions/messages.js';
import { sessionForCustomer } from '../../src/sessions/sessions.js';
import { postVoiceMessage, uploadedAudio } from '../../src/sessions/voice.js';

export default defineHandler<'postChatVoiceMessage'>(async ({ app, params, body, req }) => {
  const session = await sessionForCustomer(app.db, params.session_id, req.get('x-chat-key'));
  const upload = uploadedAudio(req.files);
  const { row, voice } = await postVoiceMessage(app, session, upload, 'customer', body.author_name, null);
  return { status: 201, body: presentMessage(row, voice, customerAudioPath) };
});
