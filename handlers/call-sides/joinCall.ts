import { defineHandler } from '../../src/http/handler.js';
import { markJoined } from '../../src/calls/calls.js';
import { joinInfo } from '../../src/calls/join.js';

export default defineHandler<'joinCall'>(async ({ app, callSide: { call, side } }) => {
  const joined = await markJoined(app, call, side);
  return { status: 200, body: await joinInfo(app.db, app.config, joined, side, app.now()) };
});
