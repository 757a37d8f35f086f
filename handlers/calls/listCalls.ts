import { defineHandler } from '../../src/http/handler.js';
import { listCalls } from '../../src/calls/calls.js';

export default defineHandler<'listCalls'>(async ({ app, principal, query }) => ({
  status: 200,
  body: await listCalls(app.db, principal, query),
}));
