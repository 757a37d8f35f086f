import { defineHandler } from '../../src/http/handler.js';
import { removeMember } from '../../src/members/members.js';

export default defineHandler<'adminDeleteMember'>(async ({ app, params }) => {
  await removeMember(app, params.org_id, params.member_id);
  return { status: 204, body: undefined };
});
