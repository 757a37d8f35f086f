import { defineHandler } from '../../src/http/handler.js';
import { agentAudioPath, presentMessage } from '../../src/sessions/messages.js';
import { findSession } from '../../src/sessions/sessions.js';
import { postVoiceMessage, uploadedAudio } from '../../src/sessions/voice.js';

export default defineHandler<'createVoiceMessage'>(async ({ app, principal, params, body, files, requestRef }) => {
  const session = await findSession(app.db, principal, params.session_id);
  const upload = uploadedAudio(files.audio);
  const { row, voice } = await postVoiceMessage(app, session, upload, body.sender, body.author_name, requestRef);
  return { status: 201, body: presentMessage(row, voice, agentAudioPath) };
});
