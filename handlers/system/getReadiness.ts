import { defineHandler } from '../../src/http/handler.js';
import { readiness } from '../../src/deployment/readiness.js';

export default defineHandler<'getReadiness'>(async ({ app }) => ({ status: 200, body: await readiness(app.db, app.draining, app.redis) }));
