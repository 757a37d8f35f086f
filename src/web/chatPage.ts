// The customer's chat page, opened from a session's customer_url (`/chat/{session_id}#k=<key>`).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';

const assets = path.join(path.dirname(fileURLToPath(import.meta.url)), 'chat');

export function chatPageRouter(): express.Router {
  const router = express.Router();
  router.get('/chat/:session_id', (_req, res) => {
    res.sendFile(path.join(assets, 'index.html'));
  });
  router.use('/chat-assets', express.static(assets, { index: false, maxAge: '5m' }));
  return router;
}
