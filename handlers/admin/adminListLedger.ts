import { defineHandler } from '../../src/http/handler.js';
import { listLedger } from '../../src/money/index.js';
import { getOrganization } from '../../src/organizations/organizations.js';

export default defineHandler<'adminListLedger'>(async ({ app, params, query }) => {
  await getOrganization(app.db, params.org_id);
  return { status: 200, body: await listLedger(app.db, params.org_id, { limit: query.limit ?? 50, before: query.before }) };
});
