import { defineHandler } from '../../src/http/handler.js';
import { createOrganization, presentAdminOrganization } from '../../src/organizations/organizations.js';

export default defineHandler<'adminCreateOrg'>(async ({ app, body }) => ({
  status: 201,
  body: presentAdminOrganization(await createOrganization(app.db, body)),
}));
