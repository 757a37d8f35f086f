// The signed-in console: overview, API keys, apps, calls, sessions, the live view of events and
// webhooks, each for the member's own organization and the mode in view (the test-mode switch). Forms post back here
// with the session's CSRF token; the rules stay in the services these routes call.
import express, { type Request, type Response } from 'express';
import type { AppContext } from '../http/context.js';
import { ALL_SCOPES, type Mode, type Payer, type Scope } from '../auth/principal.js';
import { listCalls } from '../calls/calls.js';
import { ApiError, errors } from '../errors.js';
import { openEventStream } from '../http/sse.js';
import { parseForm } from '../http/router.js';
import { dailyUsage, usageWindowStart } from '../money/index.js';
import { listConnectedApps, revokeConnections } from '../oauth/connections.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../auth/apiKeys.js';
import { getOrganization, presentOrganization } from '../organizations/organizations.js';
import { listSessions } from '../sessions/sessions.js';
import { consoleEvents } from '../sessions/streams.js';
import { deliveriesOf, resendDelivery } from '../webhooks/deliveries.js';
import { createEndpoint, deleteEndpoint, listEndpoints, rotateSecret, updateEndpoint } from '../webhooks/endpoints.js';
import { SECTIONS, type ConsoleView, type SectionPath } from './layout.js';
import { checkCsrf, isSameOriginPath, readCookie, signedInMember, signInUrl, type SignedInMember } from './session.js';
import { callsPage, LIST_LIMIT, sessionsPage } from './views/activity.js';
import { appsPage } from './views/apps.js';
import { phoneNumbersPage } from './views/phoneNumbers.js';
import { listPhoneNumbers } from '../calls/phoneNumbers.js';
import { eventsPage } from './views/events.js';
import { keysPage } from './views/keys.js';
import { overviewPage } from './views/overview.js';
import { RECENT_DELIVERIES, webhooksPage, type WebhooksOutcome } from './views/webhooks.js';
import { endpointInput, refusalText, type EndpointForm } from './webhookForm.js';
import { windowDays } from './usageChart.js';

/** The mode in view; live unless the member switched to test data. */
const MODE_COOKIE = 'console_mode';
/** The usage chart's window. */
const USAGE_DAYS = 30;

const modeOf = (req: Request): Mode => (readCookie(req, MODE_COOKIE) === 'test' ? 'test' : 'live');

const formValues = (req: Request, name: string): string[] => {
  const value: unknown = (req.body as Record<string, unknown> | undefined)?.[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];
};

const formValue = (req: Request, name: string): string => formValues(req, name)[0] ?? '';

const statusQuery = <S extends string>(req: Request, allowed: readonly S[]): S | undefined =>
  allowed.find((s) => s === req.query.status);

export function organizationPages(app: AppContext, cookie: { secure: boolean }): express.Router {
  const router = express.Router();

  /** The member, or (a page) off to sign-in and back, or (a form, the stream) 401. */
  const member = async (req: Request, res: Response): Promise<SignedInMember | null> => {
    const found = await signedInMember(app, req);
    if (found) return found;
    if (req.method !== 'GET' || req.path === '/console/events/stream') throw errors.signedOut();
    res.redirect(303, signInUrl(req.originalUrl));
    return null;
  };
  /** The member of a form post, its CSRF token checked. */
  const poster = async (req: Request, res: Response): Promise<SignedInMember> => {
    const found = (await member(req, res))!;
    checkCsrf(found, req);
    return found;
  };
  const viewOf = (signedIn: SignedInMember, req: Request, path: SectionPath, mode = modeOf(req)): ConsoleView => ({ member: signedIn, mode, path });
  const page = (res: Response, html: string, status = 200) => res.status(status).type('html').send(html);
  const setMode = (res: Response, mode: Mode) =>
    res.cookie(MODE_COOKIE, mode, { httpOnly: true, sameSite: 'lax', secure: cookie.secure, path: '/console' });

  router.get('/console', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const view = viewOf(signedIn, req, '/console');
    const now = app.now();
    const [organization, usage] = await Promise.all([
      getOrganization(app.db, signedIn.orgId),
      dailyUsage(app.db, signedIn.orgId, view.mode, USAGE_DAYS, now),
    ]);
    const days = windowDays(usageWindowStart(now, USAGE_DAYS), USAGE_DAYS);
    page(res, overviewPage(view, { organization: presentOrganization(organization), usage, days }));
  });

  router.get('/console/keys', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    page(res, keysPage(viewOf(signedIn, req, '/console/keys'), await listApiKeys(app.db, signedIn.orgId)));
  });

  router.post('/console/keys', parseForm, async (req, res) => {
    const signedIn = await poster(req, res);
    const [mode] = formValues(req, 'mode');
    const scopes = formValues(req, 'scopes');
    const view = viewOf(signedIn, req, '/console/keys');
    const refuse = async (error: string) => page(res, keysPage(view, await listApiKeys(app.db, signedIn.orgId), { error }), 422);
    if (mode !== 'live' && mode !== 'test') return refuse('Choose live or test.');
    if (!scopes.length) return refuse('Choose at least one scope.');
    if (!scopes.every((s): s is Scope => (ALL_SCOPES as readonly string[]).includes(s))) return refuse('Unknown scope.');
    const created = await createApiKey(app.db, signedIn.orgId, mode, scopes);
    // The new key's mode is the one in view from now on, so that it is listed beside the others.
    setMode(res, mode);
    page(res, keysPage({ ...view, mode }, await listApiKeys(app.db, signedIn.orgId), { created }), 201);
  });

  router.post('/console/keys/:keyId/revoke', parseForm, async (req, res) => {
    const signedIn = await poster(req, res);
    await revokeApiKey(app, String(req.params.keyId), signedIn.orgId);
    res.redirect(303, '/console/keys');
  });

  router.get('/console/phone-numbers', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const view = viewOf(signedIn, req, '/console/phone-numbers');
    page(res, phoneNumbersPage(view, await listPhoneNumbers(app, { orgId: signedIn.orgId, mode: view.mode })));
  });

  router.get('/console/apps', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    page(res, appsPage(viewOf(signedIn, req, '/console/apps'), await listConnectedApps(app.db, signedIn.orgId)));
  });

  router.post('/console/apps/:connectionId/revoke', parseForm, async (req, res) => {
    const signedIn = await poster(req, res);
    await revokeConnections(app, { id: String(req.params.connectionId), org_id: signedIn.orgId }, 'revoked in the console');
    res.redirect(303, '/console/apps');
  });

  router.get('/console/calls', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const view = viewOf(signedIn, req, '/console/calls');
    const status = statusQuery(req, ['open', 'ended'] as const);
    page(res, callsPage(view, await listCalls(app.db, { orgId: signedIn.orgId, mode: view.mode }, { status, limit: LIST_LIMIT }), status));
  });

  router.get('/console/sessions', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const view = viewOf(signedIn, req, '/console/sessions');
    const status = statusQuery(req, ['open', 'closed'] as const);
    page(res, sessionsPage(view, await listSessions(app.db, { orgId: signedIn.orgId, mode: view.mode }, { status, limit: LIST_LIMIT }), status));
  });

  router.get('/console/events', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    page(res, eventsPage(viewOf(signedIn, req, '/console/events')));
  });

  router.get('/console/events/stream', async (req, res) => {
    const signedIn = (await member(req, res))!;
    await openEventStream(app, req, res, consoleEvents(app, { orgId: signedIn.orgId, mode: modeOf(req), sessionId: signedIn.sessionId }));
  });

  /** The webhooks page of the view, each endpoint with its newest deliveries. */
  const showWebhooks = async (res: Response, view: ConsoleView, outcome: WebhooksOutcome = {}, status = 200) => {
    const payer: Payer = { orgId: view.member.orgId, mode: view.mode };
    const endpoints = await listEndpoints(app, payer);
    const items = await Promise.all(
      endpoints.map(async (endpoint) => ({ endpoint, deliveries: await deliveriesOf(app.db, endpoint.id, { limit: RECENT_DELIVERIES }) })),
    );
    page(res, webhooksPage(view, items, outcome), status);
  };
  /**
   * A webhook form acts in the mode its page showed (its `mode` field), which becomes the mode in view:
   * a page left open in one mode while another tab switched never acts on the other mode's endpoints.
   */
  const webhookPoster = async (req: Request, res: Response): Promise<{ view: ConsoleView; payer: Payer }> => {
    const signedIn = await poster(req, res);
    const mode = formValue(req, 'mode');
    if (mode !== 'live' && mode !== 'test') throw errors.badRequest('mode must be live or test');
    if (mode !== modeOf(req)) setMode(res, mode);
    return { view: viewOf(signedIn, req, '/console/webhooks', mode), payer: { orgId: signedIn.orgId, mode } };
  };
  const backToWebhooks = (res: Response, endpointId: string) => res.redirect(303, `/console/webhooks#${encodeURIComponent(endpointId)}`);

  router.get('/console/webhooks', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    await showWebhooks(res, viewOf(signedIn, req, '/console/webhooks'));
  });

  router.post('/console/webhooks', parseForm, async (req, res) => {
    const { view, payer } = await webhookPoster(req, res);
    const form: EndpointForm = {
      url: formValue(req, 'url'),
      description: formValue(req, 'description'),
      scope: formValue(req, 'events_scope'),
      events: formValues(req, 'events'),
    };
    try {
      const { secret, ...endpoint } = await createEndpoint(app, payer, endpointInput(form));
      await showWebhooks(res, view, { secret: { endpoint, secret, rotated: false } }, 201);
    } catch (err) {
      // Refused (a bad URL, a private address, too many endpoints): said in the page, the form kept.
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      await showWebhooks(res, view, { refused: { message: refusalText(err), form } }, err.status);
    }
  });

  router.post('/console/webhooks/:endpointId/disable', parseForm, async (req, res) => {
    const { payer } = await webhookPoster(req, res);
    await updateEndpoint(app, payer, String(req.params.endpointId), { disabled: true });
    backToWebhooks(res, String(req.params.endpointId));
  });

  router.post('/console/webhooks/:endpointId/enable', parseForm, async (req, res) => {
    const { payer } = await webhookPoster(req, res);
    await updateEndpoint(app, payer, String(req.params.endpointId), { disabled: false });
    backToWebhooks(res, String(req.params.endpointId));
  });

  router.post('/console/webhooks/:endpointId/rotate', parseForm, async (req, res) => {
    const { view, payer } = await webhookPoster(req, res);
    const { secret, ...endpoint } = await rotateSecret(app, payer, String(req.params.endpointId));
    await showWebhooks(res, view, { secret: { endpoint, secret, rotated: true } });
  });

  router.post('/console/webhooks/:endpointId/delete', parseForm, async (req, res) => {
    const { payer } = await webhookPoster(req, res);
    await deleteEndpoint(app.db, payer, String(req.params.endpointId));
    res.redirect(303, '/console/webhooks');
  });

  router.post('/console/webhooks/:endpointId/deliveries/:deliveryId/resend', parseForm, async (req, res) => {
    const { payer } = await webhookPoster(req, res);
    const endpointId = String(req.params.endpointId);
    await resendDelivery(app.db, payer, endpointId, String(req.params.deliveryId), app.now());
    app.webhooks.nudge();
    backToWebhooks(res, endpointId);
  });

  router.post('/console/mode', parseForm, async (req, res) => {
    await poster(req, res);
    const mode = formValue(req, 'mode');
    if (mode !== 'live' && mode !== 'test') throw errors.badRequest('mode must be live or test');
    setMode(res, mode);
    const back = formValue(req, 'return_to');
    res.redirect(303, isSameOriginPath(back) && SECTIONS.some((s) => s.path === back) ? back : '/console');
  });

  return router;
}
