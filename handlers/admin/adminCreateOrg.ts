import { defineHandler } from '../../src/http/handler.js';
import { createOrganization, presentOrganization } from '../../src/organizations/organizations.js';

export default defineHandler<'adminCreateOrg'>(async ({ app, body }) => ({
  status: 201,
  body: presentOrganization(await createOrganization(app.db, body)),
}));
