import { defineHandler } from '../../src/http/handler.js';
import { listMembers } from '../../src/members/members.js';

export default defineHandler<'adminListMembers'>(async ({ app, params }) => ({
  status: 200,
  body: await listMembers(app.db, params.org_id),
}));
