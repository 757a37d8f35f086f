import { defineHandler } from '../../src/http/handler.js';
import { rotateCustomerLink } from '../../src/sessions/sessions.js';

export default defineHandler<'createCustomerLink'>(async ({ app, principal, params }) => ({
  status: 200,
  body: await rotateCustomerLink(app, principal, params.session_id),
}));
