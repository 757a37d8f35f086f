import { defineHandler } from '../../src/http/handler.js';
import { joinChat } from '../../src/sessions/customerChat.js';

export default defineHandler<'joinChat'>(async ({ app, params, req }) => ({
  status: 200,
  body: await joinChat(app.db, params.session_id, req.get('x-chat-key')),
}));
