import { defineHandler } from '../../src/http/handler.js';
import { getOrganization, presentAdminOrganization } from '../../src/organizations/organizations.js';

export default defineHandler<'adminGetOrg'>(async ({ app, params }) => ({
  status: 200,
  body: presentAdminOrganization(await getOrganization(app.db, params.org_id)),
}));
