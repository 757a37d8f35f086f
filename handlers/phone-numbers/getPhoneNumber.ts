import { defineHandler } from '../../src/http/handler.js';
import { getPhoneNumber } from '../../src/calls/phoneNumbers.js';

export default defineHandler<'getPhoneNumber'>(async ({ app, principal, params }) => ({
  status: 200,
  body: await getPhoneNumber(app, principal, params.phone_number_id),
}));
