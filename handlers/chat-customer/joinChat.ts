import { defineHandler } from '../../src/http/handler.js';
import { joinChat } from '../../src/sessions/customerChat.js';

export default defineHandler<'joinChat'>(async ({ app, chat }) => ({
  status: 200,
  body: await joinChat(app.db, chat.session),
}));
