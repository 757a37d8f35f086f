// Twilio's webhooks, outside the API contract (Twilio calls them, not API clients): a phone leg's
// status callbacks, form-encoded and signed with X-Twilio-Signature (checked in src/calls/phoneLegs.ts).
import express from 'express';
import type { AppContext } from './context.js';
import { applyStatusCallback } from '../calls/phoneLegs.js';
import { parseForm } from './router.js';

export function twilioWebhooksRouter(app: AppContext): express.Router {
  const router = express.Router();
  router.post('/twilio/status/:leg_id', parseForm, async (req, res) => {
    // Only form fields count (Twilio's signature covers exactly them); any other body is no form.
    const form = req.is('application/x-www-form-urlencoded') && req.body && typeof req.body === 'object' ? req.body : {};
    await applyStatusCallback(app, String(req.params.leg_id), req.get('x-twilio-signature') ?? '', form as Record<string, string>);
    res.status(204).end();
  });
  return router;
}
