import { defineHandler } from '../../src/http/handler.js';
import { createSession } from '../../src/sessions/sessions.js';

export default defineHandler<'createSession'>(async ({ app, principal, body }) => ({
  status: 201,
  body: await createSession(app, principal, body),
}));
