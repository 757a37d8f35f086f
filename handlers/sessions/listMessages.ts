import { defineHandler } from '../../src/http/handler.js';
import { agentAudioPath, listMessages } from '../../src/sessions/messages.js';

export default defineHandler<'listMessages'>(async ({ app, principal, params, query }) => ({
  status: 200,
  body: await listMessages(app.db, { sessionId: params.session_id, owner: principal }, query.after ?? 0, query.limit ?? 100, agentAudioPath),
}));
