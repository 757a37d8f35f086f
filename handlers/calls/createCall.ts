import { defineHandler } from '../../src/http/handler.js';
import { createCall } from '../../src/calls/calls.js';

export default defineHandler<'createCall'>(async ({ app, principal, body }) => ({
  status: 201,
  body: await createCall(app, principal, body),
}));
