import { defineHandler } from '../../src/http/handler.js';
import { listPhoneNumbers } from '../../src/calls/phoneNumbers.js';

export default defineHandler<'listPhoneNumbers'>(async ({ app, principal, query }) => ({
  status: 200,
  body: await listPhoneNumbers(app, principal, query.limit),
}));
