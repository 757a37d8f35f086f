import { defineHandler } from '../../src/http/handler.js';
import { createMember } from '../../src/members/members.js';

export default defineHandler<'adminCreateMember'>(async ({ app, params, body }) => ({
  status: 201,
  body: await createMember(app, params.org_id, body),
}));
