import { defineHandler } from '../../src/http/handler.js';
import { listOrganizations, presentAdminOrganization } from '../../src/organizations/organizations.js';

export default defineHandler<'adminListOrgs'>(async ({ app, query }) => ({
  status: 200,
  body: (await listOrganizations(app.db, { limit: query.limit ?? 50, before: query.before })).map(presentAdminOrganization),
}));
