import { defineHandler } from '../../src/http/handler.js';

export default defineHandler<'getHealth'>(async () => ({ status: 200, body: { status: 'ok' } }));
