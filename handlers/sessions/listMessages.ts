import { defineHandler } from '../../src/http/handler.js';
import { listMessages } from '../../src/sessions/messagePages.js';
import { agentAudioPath } from '../../src/sessions/messages.js';

export default defineHandler<'listMessages'>(async ({ app, principal, params, query }) => ({
  status: 200,
  body: await listMessages(app.db, app.presentedMessages, { sessionId: params.session_id, owner: principal }, query.after ?? 0, query.limit ?? 100, agentAudioPath),
}));
