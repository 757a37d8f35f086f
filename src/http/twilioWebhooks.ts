// Twilio's webhooks, outside the API contract (Twilio calls them, not API clients), form-encoded and
// signed with X-Twilio-Signature: a phone leg's status callbacks (checked in src/calls/phoneLegs.ts) and
// the Voice webhook of the organization's phone numbers, answered with TwiML (src/calls/inbound.ts).
import express from 'express';
import type { AppContext } from './context.js';
import { applyStatusCallback } from '../calls/phoneLegs.js';
import { answerIncomingCall, applyInboundStatus, MAX_ATTEMPTS, type VoiceStep } from '../calls/inbound.js';
import { parseForm } from './router.js';
import { errors } from '../errors.js';

/** Only form fields count (Twilio's signature covers exactly them); any other body is no form. */
const formOf = (req: express.Request): Record<string, string> =>
  req.is('application/x-www-form-urlencoded') && req.body && typeof req.body === 'object' ? req.body : {};

/** A step of the voice conversation from the path; undefined for one this server never asks for. */
function voiceStep(at: string | undefined, attempt: string | undefined): VoiceStep | undefined {
  if (at === undefined) return { at: 'incoming' };
  const n = Number(attempt);
  if ((at !== 'language' && at !== 'pin') || !/^[1-9]$/.test(attempt ?? '') || n > MAX_ATTEMPTS) return undefined;
  return { at, attempt: n };
}

export function twilioWebhooksRouter(app: AppContext): express.Router {
  const router = express.Router();
  router.post('/twilio/status/:leg_id', parseForm, async (req, res) => {
    await applyStatusCallback(app, String(req.params.leg_id), req.get('x-twilio-signature') ?? '', formOf(req));
    res.status(204).end();
  });
  const voice: express.RequestHandler = async (req, res) => {
    const params = req.params as Record<string, string | undefined>;
    const step = voiceStep(params.at, params.attempt);
    if (!step) throw errors.routeNotFound(req.method, req.path);
    const deps = { ...app, liveInterpretationMissing: () => app.engines.liveInterpretationMissing() };
    const twiml = await answerIncomingCall(deps, String(params.number_id), step, req.get('x-twilio-signature') ?? '', formOf(req));
    res.type('text/xml').send(twiml);
  };
  router.post('/twilio/voice/:number_id', parseForm, voice);
  router.post('/twilio/voice/:number_id/status', parseForm, async (req, res) => {
    await applyInboundStatus(app, String(req.params.number_id), req.get('x-twilio-signature') ?? '', formOf(req));
    res.status(204).end();
  });
  router.post('/twilio/voice/:number_id/:at/:attempt', parseForm, voice);
  return router;
}
