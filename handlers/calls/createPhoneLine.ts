import { defineHandler } from '../../src/http/handler.js';
import { findCall, newPhoneLine } from '../../src/calls/calls.js';

export default defineHandler<'createPhoneLine'>(async ({ app, principal, params, body }) => {
  const call = await findCall(app.db, principal, params.call_id);
  return { status: 200, body: await newPhoneLine(app, call, body?.side ?? 'customer') };
});
