import { defineHandler } from '../../src/http/handler.js';
import { callForSide, hangUp } from '../../src/calls/calls.js';
import { joinInfo } from '../../src/calls/join.js';

export default defineHandler<'endCallSide'>(async ({ app, params, req }) => {
  const { call, side } = await callForSide(app.db, params.call_id, req.get('x-call-key'));
  return { status: 200, body: await joinInfo(app.db, app.config, await hangUp(app, call, side), side) };
});
