import { defineHandler } from '../../src/http/handler.js';
import { markCustomerSeen } from '../../src/sessions/sessions.js';
import { customerEvents } from '../../src/sessions/streams.js';

export default defineHandler<'streamChat'>(async ({ app, chat }) => {
  await markCustomerSeen(app.db, chat.session.id);
  return { eventStream: customerEvents(app, chat.session, chat.keyHash) };
});
