import { defineHandler } from '../../src/http/handler.js';
import { presentAdminOrganization, updateOrganizationSettings } from '../../src/organizations/organizations.js';

export default defineHandler<'adminUpdateOrg'>(async ({ app, params, body }) => ({
  status: 200,
  body: presentAdminOrganization(await updateOrganizationSettings(app.db, params.org_id, body)),
}));
