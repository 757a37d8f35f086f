import { defineHandler } from '../../src/http/handler.js';
import { setTelephonyConnector } from '../../src/services/organizations.js';

export default defineHandler<'adminSetTelephony'>(async ({ app, params, body }) => ({
  status: 200,
  body: await setTelephonyConnector(app.db, params.org_id, body),
}));
