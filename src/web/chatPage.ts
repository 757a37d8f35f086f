// The customer's chat page, opened from a session's customer_url (`/chat/{session_id}#k=<key>`).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { pageSecurity } from '../http/securityHeaders.js';
import { localizedPage } from './localizedPage.js';

const assets = path.join(path.dirname(fileURLToPath(import.meta.url)), 'chat');

export function chatPageRouter(): express.Router {
  const router = express.Router();
  // Integrators show the chat inside their own pages (an iframe): any site may frame it.
  router.get('/chat/:session_id', pageSecurity('anyone'), localizedPage(path.join(assets, 'index.html')));
  router.use('/chat-assets', express.static(assets, { index: false, maxAge: '5m' }));
  return router;
}
