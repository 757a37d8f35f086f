import { defineHandler } from '../../src/http/handler.js';
import { creditOrganization, presentOrganization } from '../../src/organizations/organizations.js';

export default defineHandler<'adminCreditOrg'>(async ({ app, params, body }) => ({
  status: 200,
  body: presentOrganization(await creditOrganization(app.db, params.org_id, body.amount)),
}));
