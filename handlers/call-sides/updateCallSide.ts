import { defineHandler } from '../../src/http/handler.js';
import { updateSideSettings } from '../../src/calls/calls.js';
import { joinInfo } from '../../src/calls/join.js';

export default defineHandler<'updateCallSide'>(async ({ app, body, callSide: { call, side } }) => {
  const updated = await updateSideSettings(app, call, side, body);
  return { status: 200, body: await joinInfo(app.db, app.config, updated, side, app.now()) };
});
