import { defineHandler } from '../../src/http/handler.js';
import { callForSide, updateSideSettings } from '../../src/calls/calls.js';
import { joinInfo } from '../../src/calls/join.js';

export default defineHandler<'updateCallSide'>(async ({ app, params, body, req }) => {
  const { call, side } = await callForSide(app.db, params.call_id, req.get('x-call-key'));
  const updated = await updateSideSettings(app, call, side, body);
  return { status: 200, body: await joinInfo(app.db, app.config, updated, side) };
});
