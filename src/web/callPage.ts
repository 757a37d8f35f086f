// The call page, opened from a call's agent_url or customer_url (`/call/{call_id}#k=<key>`), and what
// it shares with the chat page: the word catalogue (`/page-i18n/`) and the modules of `/page-shared/`
// (the public API with the key header, reconnecting with backoff, notices).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { pageSecurity } from '../http/securityHeaders.js';
import { localizedPage } from './localizedPage.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const assets = path.join(here, 'call');
const catalogue = path.join(here, 'i18n');
const shared = path.join(here, 'shared');

export function callPageRouter(): express.Router {
  const router = express.Router();
  // Integrators show the call inside their own pages (an iframe with allow="microphone; camera"): any site may frame it.
  router.get('/call/:call_id', pageSecurity('anyone'), localizedPage(path.join(assets, 'index.html')));
  router.use('/call-assets', express.static(assets, { index: false, maxAge: '5m' }));
  router.use('/page-i18n', express.static(catalogue, { index: false, maxAge: '5m' }));
  router.use('/page-shared', express.static(shared, { index: false, maxAge: '5m' }));
  return router;
}
