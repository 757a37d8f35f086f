import { defineHandler, requirePrincipal } from '../../src/http/handler.js';
import { findCall } from '../../src/calls/calls.js';
import { dial } from '../../src/calls/dial.js';

export default defineHandler<'dialCall'>(async ({ app, principal, params, body }) => {
  const payer = requirePrincipal(principal);
  const call = await findCall(app.db, payer, params.call_id);
  return { status: 200, body: await dial(app, payer, call, body.side ?? 'customer', body.to) };
});
