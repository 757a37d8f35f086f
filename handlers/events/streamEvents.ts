import { defineHandler } from '../../src/http/handler.js';
import { organizationEvents } from '../../src/sessions/streams.js';

export default defineHandler<'streamEvents'>(async ({ app, principal }) => ({
  eventStream: organizationEvents(app, principal),
}));
