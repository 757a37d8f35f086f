import { defineHandler } from '../../src/http/handler.js';
import { creditOrganization, presentAdminOrganization } from '../../src/organizations/organizations.js';

export default defineHandler<'adminCreditOrg'>(async ({ app, params, body }) => ({
  status: 200,
  body: presentAdminOrganization(await creditOrganization(app.db, params.org_id, body.amount)),
}));
