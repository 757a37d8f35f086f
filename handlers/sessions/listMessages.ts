import { defineHandler } from '../../src/http/handler.js';
import { agentAudioPath, listMessages } from '../../src/sessions/messages.js';
import { findSession } from '../../src/sessions/sessions.js';

export default defineHandler<'listMessages'>(async ({ app, principal, params, query }) => {
  const session = await findSession(app.db, principal, params.session_id);
  return {
    status: 200,
    body: await listMessages(app.db, session.id, query.after ?? 0, query.limit ?? 100, agentAudioPath),
  };
});
