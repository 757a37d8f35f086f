import { defineHandler, requirePrincipal } from '../../src/http/handler.js';
import { sendRecording } from '../../src/sessions/recordings.js';
import { findSession } from '../../src/sessions/sessions.js';

export default defineHandler<'getMessageAudio'>(async ({ app, principal, params, res }) => {
  const session = await findSession(app.db, requirePrincipal(principal), params.session_id);
  await sendRecording(app.db, session.id, params.message_id, res);
  return { sent: true };
});
