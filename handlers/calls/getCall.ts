import { defineHandler } from '../../src/http/handler.js';
import { findCall, presentCallWithStats } from '../../src/calls/calls.js';

export default defineHandler<'getCall'>(async ({ app, principal, params }) => ({
  status: 200,
  body: await presentCallWithStats(app, await findCall(app.db, principal, params.call_id)),
}));
