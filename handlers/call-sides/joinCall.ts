import { defineHandler } from '../../src/http/handler.js';
import { callForSide, markJoined } from '../../src/calls/calls.js';
import { joinInfo } from '../../src/calls/join.js';

export default defineHandler<'joinCall'>(async ({ app, params, req }) => {
  const { call, side } = await callForSide(app.db, params.call_id, req.get('x-call-key'));
  const joined = await markJoined(app, call, side);
  return { status: 200, body: await joinInfo(app.db, app.config, joined, side) };
});
