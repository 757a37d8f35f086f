// The page where an organization's member approves an app (GET /oauth2/authorize) and its form
// (POST /oauth2/authorize). A browser flow, described in the contract (x-page) and served here: HTML,
// the console's session cookie, redirects. The rules live in ../oauth/authorization.ts.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response } from 'express';
import type { AppContext } from '../http/context.js';
import { signInUrl, signedInMember, checkCsrf, hasRole, type SignedInMember } from './session.js';
import { ApiError, errors } from '../errors.js';
import { parseForm } from '../http/router.js';
import { pageSecurityPolicy } from '../http/securityHeaders.js';
import { escapeHtml } from '../web/html.js';
import type { PageWords } from '../web/i18n/catalogue.js';
import { consoleWords } from './language.js';
import { consoleDocument, wordsWithHtml } from './layout.js';
import { problemText } from './router.js';
import {
  approve,
  backToApp,
  checkAuthorization,
  isProblem,
  type AuthorizationParams,
  type AuthorizationRequest,
} from '../oauth/authorization.js';
import { issuerOf } from '../oauth/metadata.js';


const assets = path.join(path.dirname(fileURLToPath(import.meta.url)), '../web/oauth');
const AUTHORIZE_PATH = '/oauth2/authorize';
const FORWARDED = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'] as const;

const page = (words: PageWords, title: string, body: string) =>
  consoleDocument(words, { title, stylesheets: ['/oauth2-assets/consent.css'], body: `<main>${body}</main>` });

function errorPage(req: Request, res: Response, status: number, message: string): void {
  const words = consoleWords(req);
  const title = words.t('console.consent.cannot');
  res.set({ 'Content-Security-Policy': pageSecurityPolicy('self'), 'X-Frame-Options': 'SAMEORIGIN' });
  res.status(status).type('html').set('Cache-Control', 'no-store').send(page(words, title, `<h1>${escapeHtml(title)}</h1><p class="error">${escapeHtml(message)}</p>`));
}

function consentPage(words: PageWords, request: AuthorizationRequest, member: SignedInMember): string {
  const { t } = words;
  const hidden = (name: string, value: string | null) => (value === null ? '' : `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`);
  const scopes = request.scopes.map((scope) => `<li>${escapeHtml(t(`console.scope.${scope}`))} <code>${escapeHtml(scope)}</code></li>`).join('');
  const app = request.app.name;
  const org = member.orgName;
  return page(
    words,
    t('console.consent.title', { app }),
    `<h1>${wordsWithHtml(words, 'console.consent.heading', { app: `<strong>${escapeHtml(app)}</strong>`, org: `<strong>${escapeHtml(org)}</strong>` })}</h1>
<p class="who">${escapeHtml(t('console.consent.signedInAs', { email: member.email }))}</p>
<p>${escapeHtml(t('console.consent.willBeAble', { app }))}</p>
<ul>${scopes}</ul>
<p>${escapeHtml(t('console.consent.billed', { org }))}</p>
<form method="post" action="${AUTHORIZE_PATH}">
${hidden('csrf_token', member.csrfToken)}${hidden('response_type', 'code')}${hidden('client_id', request.app.client_id)}${hidden('redirect_uri', request.redirectUriSent ? request.redirectUri : null)}${hidden('scope', request.scopes.join(' '))}${hidden('state', request.state)}${hidden('code_challenge', request.codeChallenge)}${hidden('code_challenge_method', request.codeChallenge ? 'S256' : null)}
<div class="actions"><button type="submit" name="decision" value="deny">${escapeHtml(t('console.consent.deny'))}</button><button type="submit" name="decision" value="allow">${escapeHtml(t('console.consent.allow'))}</button></div>
</form>`,
  );
}

/** Ours only to frame; its form may also end on the app's redirect URI (browsers check redirects). */
function consentSecurity(res: Response, redirectUri: string): void {
  res.set({ 'Content-Security-Policy': pageSecurityPolicy('self', [new URL(redirectUri).origin]), 'X-Frame-Options': 'SAMEORIGIN' });
}

/** The authorization request's parameters again, as the sign-in page's way back here. */
function authorizeUrl(params: AuthorizationParams): string {
  const query = new URLSearchParams();
  for (const name of FORWARDED) if (typeof params[name] === 'string') query.set(name, params[name] as string);
  return `${AUTHORIZE_PATH}?${query}`;
}

export function authorizePageRouter(app: AppContext): express.Router {
  const router = express.Router();
  const issuer = issuerOf(app.config);

  /** Checks the request; answers the problem itself and returns null when there is one. */
  const checked = async (req: Request, res: Response, params: AuthorizationParams): Promise<AuthorizationRequest | null> => {
    const request = await checkAuthorization(app.db, params);
    if (!isProblem(request)) return request;
    if (request.kind === 'page') errorPage(req, res, 400, request.message);
    else res.redirect(302, backToApp(issuer, request.redirectUri, { error: request.error, error_description: request.description, state: request.state }));
    return null;
  };

  router.get(AUTHORIZE_PATH, async (req, res) => {
    const request = await checked(req, res, req.query);
    if (!request) return;
    const member = await signedInMember(app, req);
    if (!member) return res.redirect(303, signInUrl(authorizeUrl(req.query)));
    consentSecurity(res, request.redirectUri);
    res.status(200).type('html').set('Cache-Control', 'no-store').send(consentPage(consoleWords(req), request, member));
  });

  router.post(AUTHORIZE_PATH, parseForm, async (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    const request = await checked(req, res, form);
    if (!request) return;
    const member = await signedInMember(app, req);
    if (!member) return res.redirect(303, signInUrl(authorizeUrl(form)));
    try {
      checkCsrf(member, req);
    } catch (err) {
      if (err instanceof ApiError) return errorPage(req, res, err.status, consoleWords(req).t('console.consent.expired'));
      throw err;
    }
    if (form.decision !== 'allow') {
      return res.redirect(302, backToApp(issuer, request.redirectUri, { error: 'access_denied', error_description: 'the member denied the request', state: request.state }));
    }
    // Connecting an app changes what can act on the organization: not a viewer's to do, nor anybody's
    // before the two-factor sign-in their organization requires.
    if (!hasRole(member, 'admin')) return errorPage(req, res, 403, problemText(req, errors.roleRequired('admin', member.role)));
    if (member.orgRequiresTwoFactor && !member.twoFactor) return errorPage(req, res, 403, problemText(req, errors.twoFactorRequired()));
    const code = await approve(app, request, { orgId: member.orgId, memberId: member.id });
    res.redirect(302, backToApp(issuer, request.redirectUri, { code, state: request.state }));
  });

  router.use('/oauth2-assets', express.static(assets, { index: false, maxAge: '5m' }));
  return router;
}
