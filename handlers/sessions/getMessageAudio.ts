import { defineHandler } from '../../src/http/handler.js';
import { recordingFile } from '../../src/sessions/recordings.js';
import { findSession } from '../../src/sessions/sessions.js';

export default defineHandler<'getMessageAudio'>(async ({ app, principal, params }) => {
  const session = await findSession(app.db, principal, params.session_id);
  return { status: 200, binary: await recordingFile(app.db, session.id, params.message_id) };
});
