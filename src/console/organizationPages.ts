// The signed-in console: overview, API keys, apps, calls, sessions, the live view of events and
// webhooks, each for the member's own organization and the mode in view (the test-mode switch). Forms post back here
// with the session's CSRF token; the rules stay in the services these routes call.
import express, { type Request, type Response } from 'express';
import type { AppContext } from '../http/context.js';
import { ALL_SCOPES, type Mode, type Payer, type Scope } from '../auth/principal.js';
import { findCall, listCalls, presentCallWithStats } from '../calls/calls.js';
import { renderTranscript, transcriptPage } from '../calls/transcripts.js';
import { eventHistory } from '../events/history.js';
import { listMessages, type MessagePage } from '../sessions/messagePages.js';
import { agentAudioPath } from '../sessions/messages.js';
import { callPage, sessionPage } from './views/detail.js';
import { eventsHistoryPage, ledgerCsv, ledgerPage } from './views/history.js';
import { ApiError, errors } from '../errors.js';
import { openEventStream } from '../http/sse.js';
import { parseForm } from '../http/router.js';
import { unstorableParts } from '../http/storableInput.js';
import { dailyUsage, listLedger, usageWindowStart, type LedgerKind } from '../money/index.js';
import { listConnectedApps, revokeConnections } from '../oauth/connections.js';
import { createApiKey, KEY_NAME_MAX_LENGTH, listApiKeys, revokeApiKey, rollApiKey, ROLL_OVERLAPS_MS } from '../auth/apiKeys.js';
import { getOrganization, presentOrganization, updateOrganizationSettings } from '../organizations/organizations.js';
import { findSession, listSessions, presentSession } from '../sessions/sessions.js';
import { consoleEvents } from '../sessions/streams.js';
import { deliveriesOf, resendDelivery } from '../webhooks/deliveries.js';
import { createEndpoint, deleteEndpoint, listEndpoints, rotateSecret, updateEndpoint } from '../webhooks/endpoints.js';
import { createInvitation, createPasswordReset } from '../members/links.js';
import { getMember, isMembersPassword, listMembers, MEMBER_ROLES, removeMember, setPassword, updateMember, type MemberRole } from '../members/members.js';
import { MIN_PASSWORD_LENGTH } from '../members/passwords.js';
import { endMemberSessions } from '../members/sessions.js';
import { confirmEnrollment, disableTwoFactor, hasTwoFactor, pendingEnrollment, recoveryCodesLeft, setRequireTwoFactor, startEnrollment } from '../members/twoFactor.js';
import QRCode from 'qrcode';
import { leaveFlash, takeFlashes, type Flash } from './flash.js';
import { SECTIONS, type ConsoleView, type SectionPath } from './layout.js';
import { checkCsrf, isSameOriginPath, readCookie, requireRole, signedInMember, signInUrl, type SignedInMember } from './session.js';
import { accountPage } from './views/account.js';
import { membersPage } from './views/members.js';
import { callsPage, LIST_LIMIT, sessionsPage } from './views/activity.js';
import { appsPage } from './views/apps.js';
import { phoneNumbersPage } from './views/phoneNumbers.js';
import { listPhoneNumbers } from '../calls/phoneNumbers.js';
import { eventsPage } from './views/events.js';
import { keysPage } from './views/keys.js';
import { overviewPage } from './views/overview.js';
import { RECENT_DELIVERIES, SECRET_OVERLAPS, webhooksPage, type WebhooksOutcome } from './views/webhooks.js';
import { endpointInput, EVENT_TYPES, refusalText, type EndpointForm } from './webhookForm.js';
import { windowDays } from './usageChart.js';
import { consoleWords } from './language.js';

/** The mode in view; live unless the member switched to test data. */
const MODE_COOKIE = 'console_mode';
/** Events and charges a call's or session's page shows, its messages, a history page's rows, a CSV export's. */
const DETAIL_EVENTS = 100;
/** The utterances a call's page shows; the WebVTT download holds them all. */
const DETAIL_UTTERANCES = 200;
const DETAIL_MESSAGES = 200;
const HISTORY_LIMIT = 100;
const CSV_LIMIT = 100_000;
const LEDGER_KINDS: readonly LedgerKind[] = ['credit', 'text', 'voice_message', 'call'];
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

export function organizationPages(app: AppContext, cookie: { secure: boolean; clearSession: (res: Response) => void }): express.Router {
  const router = express.Router();

  /**
   * The member, or (a page) off to sign-in and back, or (a form, the stream) 401. While the organization
   * requires two-factor sign-in and the member has not set it up, only their account page opens.
   */
  const member = async (req: Request, res: Response): Promise<SignedInMember | null> => {
    const found = await signedInMember(app, req);
    if (found && found.orgRequiresTwoFactor && !found.twoFactor && !req.path.startsWith('/console/account')) {
      if (req.method !== 'GET') throw errors.twoFactorRequired();
      res.redirect(303, '/console/account');
      return null;
    }
    if (found) return found;
    if (req.method !== 'GET' || req.path === '/console/events/stream') throw errors.signedOut();
    res.redirect(303, signInUrl(req.originalUrl));
    return null;
  };
  /** The member of a form post, its CSRF token checked, whose role may do what `needed` may (admin: any change of data). */
  const poster = async (req: Request, res: Response, needed: MemberRole = 'admin'): Promise<SignedInMember> => {
    const found = (await member(req, res))!;
    checkCsrf(found, req);
    requireRole(found, needed);
    return found;
  };
  const viewOf = (signedIn: SignedInMember, req: Request, path: SectionPath, mode = modeOf(req)): ConsoleView => ({ member: signedIn, words: consoleWords(req), mode, path });
  /** The view of a page, with what the form before it left (said once; a reload shows it no more). */
  const pageView = async (signedIn: SignedInMember, req: Request, path: SectionPath): Promise<{ view: ConsoleView; flashes: Flash[] }> => {
    const flashes = await takeFlashes(app, signedIn.sessionId);
    const view = viewOf(signedIn, req, path);
    const notices = flashes.flatMap((f) => (f.kind === 'notice' ? [view.words.t(f.key, f.values)] : []));
    return { view: { ...view, notices }, flashes };
  };
  const flashOf = <K extends Flash['kind']>(flashes: Flash[], kind: K) => flashes.find((f): f is Extract<Flash, { kind: K }> => f.kind === kind);
  /** Post/redirect/get: the page to show next, with what to say there once. */
  const after = async (res: Response, signedIn: SignedInMember, to: string, ...flashes: Flash[]) => {
    for (const flash of flashes) await leaveFlash(app, signedIn.sessionId, flash);
    res.redirect(303, to);
  };
  /** A notice for the next page, worded there in its reader's language. */
  const notice = (key: string, values?: Record<string, string | number>): Flash => ({ kind: 'notice', key, values });
  const page = (res: Response, html: string, status = 200) => res.status(status).type('html').send(html);
  const setMode = (res: Response, mode: Mode) =>
    res.cookie(MODE_COOKIE, mode, { httpOnly: true, sameSite: 'lax', secure: cookie.secure, path: '/console' });

  router.get('/console', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const { view } = await pageView(signedIn, req, '/console');
    const now = app.now();
    const [organization, usage] = await Promise.all([
      getOrganization(app.db, signedIn.orgId),
      dailyUsage(app.db, signedIn.orgId, view.mode, USAGE_DAYS, now),
    ]);
    const days = windowDays(usageWindowStart(now, USAGE_DAYS), USAGE_DAYS);
    page(res, overviewPage(view, { organization: presentOrganization(organization), transcripts: organization.transcripts, usage, days }));
  });

  router.post('/console/settings/transcripts', parseForm, async (req, res) => {
    const signedIn = await poster(req, res);
    const setting = formValue(req, 'transcripts');
    if (setting !== 'on' && setting !== 'off') throw errors.badRequest('transcripts must be on or off');
    await updateOrganizationSettings(app.db, signedIn.orgId, { transcripts: setting === 'on' });
    await after(res, signedIn, '/console#transcripts-title', notice(setting === 'on' ? 'console.transcripts.nowOn' : 'console.transcripts.nowOff'));
  });

  router.get('/console/keys', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const { view, flashes } = await pageView(signedIn, req, '/console/keys');
    page(res, keysPage(view, await listApiKeys(app.db, signedIn.orgId), { created: flashOf(flashes, 'key')?.created }));
  });

  router.post('/console/keys', parseForm, async (req, res) => {
    const signedIn = await poster(req, res);
    const [mode] = formValues(req, 'mode');
    const scopes = formValues(req, 'scopes');
    const view = viewOf(signedIn, req, '/console/keys');
    const refuse = async (error: string) => page(res, keysPage(view, await listApiKeys(app.db, signedIn.orgId), { error }), 422);
    const { t } = view.words;
    if (mode !== 'live' && mode !== 'test') return refuse(t('console.keys.chooseMode'));
    if (!scopes.length) return refuse(t('console.keys.chooseScope'));
    if (!scopes.every((s): s is Scope => (ALL_SCOPES as readonly string[]).includes(s))) return refuse(t('console.keys.unknownScope'));
    const name = formValue(req, 'name').trim();
    if (name.length > KEY_NAME_MAX_LENGTH || unstorableParts([['body', { name }]]).length) return refuse(t('console.keys.nameLength', { max: KEY_NAME_MAX_LENGTH }));
    const created = await createApiKey(app.db, signedIn.orgId, mode, scopes, { name, createdBy: signedIn.email });
    // The new key's mode is the one in view from now on, so that it is listed beside the others.
    setMode(res, mode);
    await after(res, signedIn, '/console/keys', { kind: 'key', created });
  });

  router.post('/console/keys/:keyId/revoke', parseForm, async (req, res) => {
    const signedIn = await poster(req, res);
    const keyId = String(req.params.keyId);
    await revokeApiKey(app, keyId, signedIn.orgId);
    await after(res, signedIn, '/console/keys', notice('console.keys.revoked', { id: keyId }));
  });

  router.post('/console/keys/:keyId/roll', parseForm, async (req, res) => {
    const signedIn = await poster(req, res);
    const overlapMs = Number(formValue(req, 'overlap_seconds')) * 1000;
    if (!(ROLL_OVERLAPS_MS as readonly number[]).includes(overlapMs)) throw errors.badRequest('overlap_seconds must be 0, 3600, 86400 or 604800');
    const keyId = String(req.params.keyId);
    const { created, oldKeyExpiresAt } = await rollApiKey(app, keyId, signedIn.orgId, overlapMs, signedIn.email, app.now());
    const rolled = oldKeyExpiresAt
      ? notice('console.keys.rolledOverlap', { id: created.id, old: keyId, until: `${oldKeyExpiresAt.slice(0, 16).replace('T', ' ')} UTC` })
      : notice('console.keys.rolled', { id: created.id, old: keyId });
    await after(res, signedIn, '/console/keys', { kind: 'key', created }, rolled);
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
    const { view } = await pageView(signedIn, req, '/console/apps');
    page(res, appsPage(view, await listConnectedApps(app.db, signedIn.orgId)));
  });

  router.post('/console/apps/:connectionId/revoke', parseForm, async (req, res) => {
    const signedIn = await poster(req, res);
    await revokeConnections(app, { id: String(req.params.connectionId), org_id: signedIn.orgId }, 'revoked in the console');
    await after(res, signedIn, '/console/apps', notice('console.apps.disconnected'));
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

  /** `YYYY-MM-DD` as the start of that UTC day (plus `days`); undefined for nothing, null for nonsense. */
  const dayOf = (text: string, days = 0): Date | undefined | null => {
    if (!text) return undefined;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(Date.parse(text))) return null;
    return new Date(Date.parse(text) + days * 86_400_000);
  };
  const queryText = (req: Request, name: string, max = 100) => {
    const value = req.query[name];
    return typeof value === 'string' ? value.slice(0, max) : '';
  };
  /** The time span of a filter form (`to` inclusive), or the refusal to say. */
  const spanOf = (req: Request) => {
    const badDates = consoleWords(req).t('console.history.badDates');
    const from = queryText(req, 'from', 10);
    const to = queryText(req, 'to', 10);
    const since = dayOf(from);
    const until = dayOf(to, 1);
    return { from, to, since: since ?? undefined, until: until ?? undefined, error: since === null || until === null ? badDates : undefined };
  };

  router.get('/console/calls/:callId', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const view = viewOf(signedIn, req, '/console/calls');
    const payer = { orgId: signedIn.orgId, mode: view.mode };
    const row = await findCall(app.db, payer, String(req.params.callId));
    const [events, charges, transcript, presented] = await Promise.all([
      eventHistory(app.db, payer, { objectId: row.id, limit: DETAIL_EVENTS }),
      listLedger(app.db, signedIn.orgId, { limit: DETAIL_EVENTS }, { mode: view.mode, references: [row.id] }),
      transcriptPage(app.db, row, 0, DETAIL_UTTERANCES + 1),
      presentCallWithStats(app, row),
    ]);
    const call = { ...presented, agent_joined_at: row.agent_joined_at?.toISOString() ?? null, customer_joined_at: row.customer_joined_at?.toISOString() ?? null };
    const utterances = transcript.utterances.slice(0, DETAIL_UTTERANCES);
    page(res, callPage(view, call, { events, charges, utterances, moreUtterances: transcript.utterances.length > DETAIL_UTTERANCES }));
  });

  router.get('/console/calls/:callId/transcript.vtt', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const row = await findCall(app.db, { orgId: signedIn.orgId, mode: viewOf(signedIn, req, '/console/calls').mode }, String(req.params.callId));
    res
      .status(200)
      .type('text/vtt; charset=utf-8')
      .set('Cache-Control', 'no-store')
      .set('Content-Disposition', `attachment; filename="transcript-${row.id}.vtt"`)
      .send(await renderTranscript(app.db, row, 'vtt'));
  });

  router.get('/console/sessions/:sessionId', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const view = viewOf(signedIn, req, '/console/sessions');
    const payer = { orgId: signedIn.orgId, mode: view.mode };
    const session = presentSession(await findSession(app.db, payer, String(req.params.sessionId)));
    const page1 = await listMessages(app.db, app.presentedMessages, { sessionId: session.id, owner: payer }, 0, DETAIL_MESSAGES, agentAudioPath);
    const { messages } = JSON.parse(page1.bytes.toString('utf8')) as MessagePage;
    const [events, charges] = await Promise.all([
      eventHistory(app.db, payer, { objectId: session.id, limit: DETAIL_EVENTS }),
      listLedger(app.db, signedIn.orgId, { limit: DETAIL_EVENTS }, { mode: view.mode, references: messages.map((m) => `message ${m.id}`) }),
    ]);
    page(res, sessionPage(view, session, { messages, events, charges }));
  });

  router.get('/console/events/history', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const view = viewOf(signedIn, req, '/console/events');
    const span = spanOf(req);
    const type = EVENT_TYPES.find((t) => t === req.query.type) ?? '';
    const object = queryText(req, 'object').trim();
    const events = span.error
      ? []
      : await eventHistory(app.db, { orgId: signedIn.orgId, mode: view.mode }, { type, objectId: object, since: span.since, until: span.until, limit: HISTORY_LIMIT });
    page(res, eventsHistoryPage(view, EVENT_TYPES, { type, object, from: span.from, to: span.to }, events, HISTORY_LIMIT, span.error), span.error ? 422 : 200);
  });

  /** The ledger rows a ledger page or its CSV shows: the mode in view, the filter's kind and span. */
  const ledgerQuery = (req: Request, signedIn: SignedInMember, limit: number) => {
    const span = spanOf(req);
    const kind = LEDGER_KINDS.find((k) => k === req.query.kind);
    const rows = span.error ? Promise.resolve([]) : listLedger(app.db, signedIn.orgId, { limit }, { mode: modeOf(req), kind, since: span.since, until: span.until });
    return { span, kind: kind ?? '', rows };
  };

  router.get('/console/ledger', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const { span, kind, rows } = ledgerQuery(req, signedIn, HISTORY_LIMIT);
    const view = viewOf(signedIn, req, '/console/ledger');
    page(res, ledgerPage(view, LEDGER_KINDS, { kind, from: span.from, to: span.to }, await rows, HISTORY_LIMIT, span.error), span.error ? 422 : 200);
  });

  router.get('/console/ledger.csv', async (req, res) => {
    const signedIn = (await member(req, res))!;
    const { span, rows } = ledgerQuery(req, signedIn, CSV_LIMIT);
    if (span.error) throw errors.badRequest(span.error);
    res
      .status(200)
      .type('text/csv; charset=utf-8')
      .set('Content-Disposition', `attachment; filename="ledger-${modeOf(req)}.csv"`)
      .send(ledgerCsv(await rows));
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
  const showWebhooks = async (
    res: Response,
    view: ConsoleView,
    outcome: WebhooksOutcome = {},
    status = 200,
    made?: Extract<Flash, { kind: 'webhookSecret' }>,
  ) => {
    const payer: Payer = { orgId: view.member.orgId, mode: view.mode };
    const endpoints = await listEndpoints(app, payer);
    const items = await Promise.all(
      endpoints.map(async (endpoint) => ({ endpoint, deliveries: await deliveriesOf(app.db, endpoint.id, { limit: RECENT_DELIVERIES }) })),
    );
    const endpoint = made && endpoints.find((e) => e.id === made.endpointId);
    const secret = made && endpoint ? { endpoint, secret: made.secret, rotated: made.rotated } : outcome.secret;
    page(res, webhooksPage(view, items, { ...outcome, secret }), status);
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
    const { view, flashes } = await pageView(signedIn, req, '/console/webhooks');
    const made = flashOf(flashes, 'webhookSecret');
    await showWebhooks(res, view, {}, 200, made);
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
      const { secret, id } = await createEndpoint(app, payer, endpointInput(form));
      await after(res, view.member, `/console/webhooks#${encodeURIComponent(id)}`, { kind: 'webhookSecret', endpointId: id, secret, rotated: false });
    } catch (err) {
      // Refused (a bad URL, a private address, too many endpoints): said in the page, the form kept.
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      await showWebhooks(res, view, { refused: { message: refusalText(view.words, err), form } }, err.status);
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
    const overlap = SECRET_OVERLAPS.find(([seconds]) => String(seconds) === (formValue(req, 'overlap_seconds') || '0'));
    if (!overlap) throw errors.badRequest('overlap_seconds must be 0, 3600 or 86400');
    const { secret, id } = await rotateSecret(app, payer, String(req.params.endpointId), overlap[0]);
    await after(res, view.member, `/console/webhooks#${encodeURIComponent(id)}`, { kind: 'webhookSecret', endpointId: id, secret, rotated: true });
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

  // Members: everyone reads the list; owners change it.
  const showMembers = async (res: Response, view: ConsoleView, outcome: Parameters<typeof membersPage>[2] = {}, status = 200) =>
    page(res, membersPage(view, await listMembers(app.db, view.member.orgId), outcome), status);

  router.get('/console/members', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const { view, flashes } = await pageView(signedIn, req, '/console/members');
    await showMembers(res, view, { link: flashOf(flashes, 'link') });
  });

  router.post('/console/members/invite', parseForm, async (req, res) => {
    const signedIn = await poster(req, res, 'owner');
    const email = formValue(req, 'email').trim();
    const role = MEMBER_ROLES.find((r) => r === formValue(req, 'role'));
    const view = viewOf(signedIn, req, '/console/members');
    const refuse = (error: string, status = 422) => showMembers(res, view, { error, email }, status);
    if (!role) return refuse(view.words.t('console.members.chooseRole'));
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254) return refuse(view.words.t('console.members.enterEmail'));
    try {
      const link = await createInvitation(app.db, app.config.publicBaseUrl, signedIn.orgId, { email, role, createdBy: signedIn.id }, app.now());
      await after(res, signedIn, '/console/members', { kind: 'link', link, purpose: 'invitation', email: email.toLowerCase() });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
      await refuse(view.words.t('console.members.alreadyMember'), 409);
    }
  });

  /** An owner's change of member `:memberId`, then back to the list. */
  const memberChange = (action: string, change: (signedIn: SignedInMember, memberId: string, req: Request) => Promise<Flash>) =>
    router.post(`/console/members/:memberId/${action}`, parseForm, async (req, res) => {
      const signedIn = await poster(req, res, 'owner');
      const flash = await change(signedIn, String(req.params.memberId), req);
      await after(res, signedIn, '/console/members', flash);
    });

  memberChange('role', async (signedIn, memberId, req) => {
    const role = MEMBER_ROLES.find((r) => r === formValue(req, 'role'));
    if (!role) throw errors.badRequest('role must be owner, admin or viewer');
    const changed = await updateMember(app, signedIn.orgId, memberId, { role }, app.now());
    return notice(`console.members.nowRole.${role}`, { email: changed.email });
  });
  memberChange('disable', async (signedIn, memberId) => {
    const changed = await updateMember(app, signedIn.orgId, memberId, { disabled: true }, app.now());
    return notice('console.members.disabled', { email: changed.email });
  });
  memberChange('enable', async (signedIn, memberId) => {
    const changed = await updateMember(app, signedIn.orgId, memberId, { disabled: false }, app.now());
    return notice('console.members.enabled', { email: changed.email });
  });
  memberChange('remove', async (signedIn, memberId) => {
    await removeMember(app, signedIn.orgId, memberId);
    return notice('console.members.removed');
  });
  memberChange('password_reset', async (signedIn, memberId) => {
    const link = await createPasswordReset(app.db, app.config.publicBaseUrl, signedIn.orgId, memberId, signedIn.id, app.now());
    return { kind: 'link', link, purpose: 'password_reset', email: (await getMember(app.db, signedIn.orgId, memberId)).email };
  });

  // The member's own account: any role may change their own password and sign out everywhere.
  /** The account page: the enrollment waiting for its first code (with its QR code), or what is on. */
  const showAccount = async (res: Response, view: ConsoleView, outcome: { error?: string; recoveryCodes?: string[] } = {}, status = 200) => {
    const enrollment = await pendingEnrollment(app, view.member.id);
    const qr = enrollment && (await QRCode.toString(enrollment.uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }));
    const twoFactor = {
      on: await hasTwoFactor(app.db, view.member.id),
      required: view.member.orgRequiresTwoFactor,
      enrollment: enrollment && { secret: enrollment.secret, qrSvg: qr! },
      recoveryCodesLeft: await recoveryCodesLeft(app.db, view.member.id),
    };
    page(res, accountPage(view, { ...outcome, twoFactor }), status);
  };

  router.get('/console/account', async (req, res) => {
    const signedIn = await member(req, res);
    if (!signedIn) return;
    const { view, flashes } = await pageView(signedIn, req, '/console/account');
    if (signedIn.orgRequiresTwoFactor && !signedIn.twoFactor) view.notices = [...(view.notices ?? []), view.words.t('console.account.required')];
    await showAccount(res, view, { recoveryCodes: flashOf(flashes, 'recoveryCodes')?.codes });
  });

  router.post('/console/account/two-factor/start', parseForm, async (req, res) => {
    const signedIn = await poster(req, res, 'viewer');
    await startEnrollment(app, signedIn.id);
    await after(res, signedIn, '/console/account#two-factor');
  });

  router.post('/console/account/two-factor/confirm', parseForm, async (req, res) => {
    const signedIn = await poster(req, res, 'viewer');
    try {
      const codes = await confirmEnrollment(app, signedIn.id, formValue(req, 'code'), app.now());
      await after(res, signedIn, '/console/account#two-factor', { kind: 'recoveryCodes', codes }, notice('console.account.twoFactorOn'));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      const view = viewOf(signedIn, req, '/console/account');
      await showAccount(res, view, { error: view.words.t('console.account.wrongCode') }, 422);
    }
  });

  router.post('/console/account/two-factor/disable', parseForm, async (req, res) => {
    const signedIn = await poster(req, res, 'viewer');
    await disableTwoFactor(app.db, signedIn.id);
    await after(res, signedIn, '/console/account#two-factor', notice('console.account.twoFactorOff'));
  });

  router.post('/console/members/require-two-factor', parseForm, async (req, res) => {
    const signedIn = await poster(req, res, 'owner');
    const required = formValue(req, 'required') === 'on';
    if (required && !signedIn.twoFactor) throw errors.conflict('set up two-factor sign-in for yourself first (Your account), so you are not locked out');
    await setRequireTwoFactor(app.db, signedIn.orgId, required);
    await after(res, signedIn, '/console/members', notice(required ? 'console.members.twoFactorRequired' : 'console.members.twoFactorNotRequired'));
  });

  router.post('/console/account/password', parseForm, async (req, res) => {
    const signedIn = await poster(req, res, 'viewer');
    const current = formValue(req, 'current_password');
    const next = formValue(req, 'new_password');
    const view = viewOf(signedIn, req, '/console/account');
    const refuse = (error: string, status: number) => showAccount(res, view, { error }, status);
    if (next.length < MIN_PASSWORD_LENGTH || next.length > 1024) return refuse(view.words.t('console.password.length', { min: MIN_PASSWORD_LENGTH, max: 1024 }), 422);
    if (current.length > 1024 || !(await isMembersPassword(app, signedIn.id, current))) return refuse(view.words.t('console.account.wrongPassword'), 403);
    await setPassword(app, signedIn.id, next, signedIn.sessionId);
    await after(res, signedIn, '/console/account', notice('console.account.passwordChanged'));
  });

  router.post('/console/account/sign-out-everywhere', parseForm, async (req, res) => {
    const signedIn = await poster(req, res, 'viewer');
    await endMemberSessions(app, signedIn.id);
    cookie.clearSession(res);
    res.redirect(303, '/console/sign-in');
  });

  router.post('/console/mode', parseForm, async (req, res) => {
    await poster(req, res, 'viewer');
    const mode = formValue(req, 'mode');
    if (mode !== 'live' && mode !== 'test') throw errors.badRequest('mode must be live or test');
    setMode(res, mode);
    const back = formValue(req, 'return_to');
    res.redirect(303, isSameOriginPath(back) && SECTIONS.some((s) => s.path === back) ? back : '/console');
  });

  return router;
}
