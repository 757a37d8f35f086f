import { defineHandler } from '../../src/http/handler.js';
import { listSessions } from '../../src/sessions/sessions.js';

export default defineHandler<'listSessions'>(async ({ app, principal, query }) => ({
  status: 200,
  body: await listSessions(app.db, principal, query),
}));
