import { defineHandler } from '../../src/http/handler.js';
import { markCustomerSeen, sessionForCustomer } from '../../src/sessions/sessions.js';
import { streamCustomerEvents } from '../../src/sessions/streams.js';

export default defineHandler<'streamChat'>(async ({ app, params, req, res }) => {
  const key = req.get('x-chat-key');
  const session = await sessionForCustomer(app.db, params.session_id, key);
  await markCustomerSeen(app.db, session.id);
  await streamCustomerEvents(app, session, key!, req, res);
  return { sent: true };
});
