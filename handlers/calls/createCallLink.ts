import { defineHandler } from '../../src/http/handler.js';
import { findCall, rotateSideLink } from '../../src/calls/calls.js';

export default defineHandler<'createCallLink'>(async ({ app, principal, params, body }) => {
  const call = await findCall(app.db, principal, params.call_id);
  return { status: 200, body: await rotateSideLink(app, call, body.side) };
});
