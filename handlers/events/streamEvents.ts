import { defineHandler, requirePrincipal } from '../../src/http/handler.js';
import { streamOrganizationEvents } from '../../src/sessions/streams.js';

export default defineHandler<'streamEvents'>(async ({ app, principal, req, res }) => {
  await streamOrganizationEvents(app, requirePrincipal(principal), req, res);
  return { sent: true };
});
