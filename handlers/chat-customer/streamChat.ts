import { defineHandler, requireChatSession } from '../../src/http/handler.js';
import { markCustomerSeen } from '../../src/sessions/sessions.js';
import { streamCustomerEvents } from '../../src/sessions/streams.js';

export default defineHandler<'streamChat'>(async ({ app, req, res }) => {
  const session = requireChatSession(req);
  await markCustomerSeen(app.db, session.id);
  await streamCustomerEvents(app, session, req.get('x-chat-key')!, req, res);
  return { sent: true };
});
