import { defineHandler } from '../../src/http/handler.js';
import { deleteSession } from '../../src/sessions/sessions.js';

export default defineHandler<'deleteSession'>(async ({ app, principal, params }) => {
  await deleteSession(app, principal, params.session_id);
  return { status: 204, body: undefined };
});
