// GET /metrics: this instance's Prometheus metrics, for the operator (the admin token, as the admin
// API). Outside the contract like the pages: it is the scraper's format, not the API's.
import express from 'express';
import type { AppContext } from './context.js';
import { authenticateAdmin } from './authenticate.js';

export function metricsRouter(app: AppContext): express.Router {
  const router = express.Router();
  router.get('/metrics', authenticateAdmin(app), async (_req, res) => {
    res.set('Cache-Control', 'no-store').type(app.metrics.registry.contentType).send(await app.metrics.registry.metrics());
  });
  return router;
}
