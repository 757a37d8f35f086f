import { defineHandler } from '../../src/http/handler.js';
import { agentAudioPath, postMessage, presentMessage } from '../../src/sessions/messages.js';
import { findSession } from '../../src/sessions/sessions.js';

export default defineHandler<'createMessage'>(async ({ app, principal, params, body, requestRef }) => {
  const session = await findSession(app.db, principal, params.session_id);
  const { row, voice } = await postMessage(app, session, body, requestRef);
  return { status: 201, body: presentMessage(row, voice, agentAudioPath) };
});
