import { defineHandler } from '../../src/http/handler.js';
import { createApp } from '../../src/oauth/apps.js';

export default defineHandler<'adminCreateApp'>(async ({ app, body }) => ({ status: 201, body: await createApp(app.db, body) }));
