import { defineHandler } from '../../src/http/handler.js';
import { findCall } from '../../src/calls/calls.js';
import { dial } from '../../src/calls/dial.js';

export default defineHandler<'dialCall'>(async ({ app, principal, params, body }) => {
  const call = await findCall(app.db, principal, params.call_id);
  return { status: 200, body: await dial(app, principal, call, body.side ?? 'customer', body.to) };
});
