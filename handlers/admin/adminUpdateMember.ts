import { defineHandler } from '../../src/http/handler.js';
import { updateMember } from '../../src/members/members.js';

export default defineHandler<'adminUpdateMember'>(async ({ app, params, body }) => ({
  status: 200,
  body: await updateMember(app, params.org_id, params.member_id, body, app.now()),
}));
