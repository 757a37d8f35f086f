import { defineHandler, requireChatSession } from '../../src/http/handler.js';
import { joinChat } from '../../src/sessions/customerChat.js';

export default defineHandler<'joinChat'>(async ({ app, req }) => ({
  status: 200,
  body: await joinChat(app.db, requireChatSession(req)),
}));
