import { defineHandler } from '../../src/http/handler.js';
import { setTelephonyConnector } from '../../src/telephony/connectors.js';

export default defineHandler<'adminSetTelephony'>(async ({ app, params, body }) => ({
  status: 200,
  body: await setTelephonyConnector(app.db, app.secretsKey, params.org_id, body),
}));
