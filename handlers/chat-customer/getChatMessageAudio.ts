import { defineHandler } from '../../src/http/handler.js';
import { recordingFile } from '../../src/sessions/recordings.js';

export default defineHandler<'getChatMessageAudio'>(async ({ app, params, chat }) => ({
  status: 200,
  binary: await recordingFile(app.db, chat.session.id, params.message_id),
}));
