import { defineHandler } from '../../src/http/handler.js';
import { endCall, findCall, presentCallWithStats } from '../../src/calls/calls.js';

export default defineHandler<'endCall'>(async ({ app, principal, params }) => {
  const call = await findCall(app.db, principal, params.call_id);
  return { status: 200, body: await presentCallWithStats(app, await endCall(app, call)) };
});
