import { defineHandler, requireChatSession } from '../../src/http/handler.js';
import { customerAudioPath, presentMessage } from '../../src/sessions/messages.js';
import { postVoiceMessage, uploadedAudio } from '../../src/sessions/voice.js';

export default defineHandler<'postChatVoiceMessage'>(async ({ app, body, req }) => {
  const session = requireChatSession(req);
  const upload = uploadedAudio(req.files);
  const { row, voice } = await postVoiceMessage(app, session, upload, 'customer', body.author_name, null);
  return { status: 201, body: presentMessage(row, voice, customerAudioPath) };
});
