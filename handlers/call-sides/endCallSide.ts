import { defineHandler } from '../../src/http/handler.js';
import { hangUp } from '../../src/calls/calls.js';
import { joinInfo } from '../../src/calls/join.js';

export default defineHandler<'endCallSide'>(async ({ app, callSide: { call, side } }) => ({
  status: 200,
  body: await joinInfo(app.db, app.config, await hangUp(app, call, side), side, app.now()),
}));
