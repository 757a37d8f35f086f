import { defineHandler } from '../../src/http/handler.js';
import { customerAudioPath, presentMessage } from '../../src/sessions/messages.js';
import { postVoiceMessage, uploadedAudio } from '../../src/sessions/voice.js';

export default defineHandler<'postChatVoiceMessage'>(async ({ app, body, chat, files }) => {
  const upload = uploadedAudio(files.audio);
  const { row, voice } = await postVoiceMessage(app, chat.session, upload, 'customer', body.author_name, null, body.language_hint);
  return { status: 201, body: presentMessage(row, voice, customerAudioPath) };
});
