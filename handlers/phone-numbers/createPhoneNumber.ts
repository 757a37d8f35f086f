import { defineHandler } from '../../src/http/handler.js';
import { createPhoneNumber } from '../../src/calls/phoneNumbers.js';

export default defineHandler<'createPhoneNumber'>(async ({ app, principal, body }) => ({
  status: 201,
  body: await createPhoneNumber(app, principal, body),
}));
