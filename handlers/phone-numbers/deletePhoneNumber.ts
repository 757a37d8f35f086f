import { defineHandler } from '../../src/http/handler.js';
import { deletePhoneNumber } from '../../src/calls/phoneNumbers.js';

export default defineHandler<'deletePhoneNumber'>(async ({ app, principal, params }) => {
  await deletePhoneNumber(app.db, principal, params.phone_number_id);
  return { status: 204, body: undefined };
});
