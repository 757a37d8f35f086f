import { defineHandler } from '../../src/http/handler.js';
import { endCall, findCall, presentCall } from '../../src/calls/calls.js';

export default defineHandler<'endCall'>(async ({ app, principal, params }) => {
  const call = await findCall(app.db, principal, params.call_id);
  return { status: 200, body: presentCall(await endCall(app, call)) };
});
