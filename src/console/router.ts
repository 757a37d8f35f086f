// The organization console (`/console`): sign-in with email and password and sign-out here, the
// signed-in pages in ./organizationPages.ts. Sessions live in an HttpOnly cookie; every state-changing
// form carries a CSRF token. A refused console request gets a page, not JSON.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppContext } from '../http/context.js';
import { ApiError, errors } from '../errors.js';
import { parseForm } from '../http/router.js';
import { pageSecurity } from '../http/securityHeaders.js';
import { memberByPassword, normalEmail } from '../members/members.js';
import { openLink, useLink } from '../members/links.js';
import { MIN_PASSWORD_LENGTH } from '../members/passwords.js';
import { endMemberSession, startMemberSession } from '../members/sessions.js';
import { CHALLENGE_TTL_MS, checkSecondFactor, endChallenge, findChallenge, hasTwoFactor, startChallenge } from '../members/twoFactor.js';
import { problemPage } from './layout.js';
import { consoleWords } from './language.js';
import { WORD_KEYS } from '../web/i18n/catalogue.js';
import { organizationPages } from './organizationPages.js';
import { linkPage, signInPage, twoFactorPage, usedLinkPage } from './pages.js';
import { checkCsrf, isForeignOrigin, isHttps, isSameOriginPath, readCookie, sessionCookieName, signedInMember } from './session.js';

const assets = path.join(path.dirname(fileURLToPath(import.meta.url)), '../web/console');

const HOME = '/console';

/** A sign-in whose password was right, waiting for its second factor (its token; path /console). */
const CHALLENGE_COOKIE = 'console_two_factor';
const TWO_FACTOR_PATH = '/console/sign-in/two-factor';

/** The sign-in form's own CSRF token (before there is a session): a cookie the form must repeat. */
const FORM_COOKIE = 'console_sign_in';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Text the database can hold (no NUL, no unpaired surrogate): anything else cannot be anybody's email or password. */
const storable = (text: string) => !text.includes('\0') && !LONE_SURROGATE.test(text);

const field = (body: unknown, name: string): string | undefined => {
  const value = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : undefined;
};

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * A refusal as the reader reads it: the API's own (English) sentence in English, else the catalogue's
 * words for its status (`console.error.<status>`).
 */
export function problemText(req: Request, err: ApiError): string {
  const words = consoleWords(req);
  if (words.lang === 'en') return err.message;
  const key = `console.error.${err.status}`;
  return words.t(WORD_KEYS.includes(key) ? key : 'console.error.other');
}

export function consoleRouter(app: AppContext): express.Router {
  const router = express.Router();
  const cookieName = sessionCookieName(app);
  const secure = isHttps(app);
  const cookieBase = { httpOnly: true, sameSite: 'lax' as const, secure, path: '/' };

  // Console pages are this server's own (never framed elsewhere) and never cached.
  router.use('/console', pageSecurity('self'), (_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    res.set('Referrer-Policy', 'same-origin');
    next();
  });
  router.use('/console-assets', express.static(assets, { index: false, maxAge: '5m' }));

  const returnToOf = (req: express.Request): string => {
    const raw = field(req.body, 'return_to') ?? (typeof req.query.return_to === 'string' ? req.query.return_to : undefined);
    return isSameOriginPath(raw) ? raw : HOME;
  };

  const formToken = (req: express.Request, res: express.Response): string => {
    const existing = readCookie(req, FORM_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const token = randomBytes(32).toString('base64url');
    res.cookie(FORM_COOKIE, token, { ...cookieBase, path: '/console' });
    return token;
  };

  const showSignIn = (req: express.Request, res: express.Response, status: number, options: { email?: string; error?: string } = {}) => {
    res.status(status).type('html').send(signInPage(consoleWords(req), { returnTo: returnToOf(req), formToken: formToken(req, res), ...options }));
  };

  router.get('/console/sign-in', async (req, res) => {
    // Already signed in (an OAuth authorization sends members here too): straight on.
    if (await signedInMember(app, req)) return res.redirect(303, returnToOf(req));
    // A used invitation or reset link comes here with the email to sign in with.
    const email = typeof req.query.email === 'string' && req.query.email.length <= 254 ? req.query.email : undefined;
    showSignIn(req, res, 200, { email });
  });

  /**
   * Guessing: refused sign-ins slow down the address and the email they came from and were for; an
   * address that has not been failing is never made to wait (src/ratelimit/signInThrottle.ts). `wait`
   * is the seconds to wait (then Retry-After is set), 0 when the attempt is checked.
   */
  const throttled = async (req: express.Request, res: express.Response, email: string) => {
    const address = app.failedAttempts.addressOf(req);
    const emailKey = hash('sha256', normalEmail(email), 'hex');
    const wait = Math.max(await app.failedAttempts.retryAfter(address), await app.signInThrottle.retryAfter(address, emailKey, app.now()));
    if (wait) res.set('Retry-After', String(wait));
    return { address, emailKey, wait };
  };
  const tooMany = (req: express.Request, wait: number) => consoleWords(req).t('console.signIn.tooMany', { seconds: wait });

  router.post('/console/sign-in', parseForm, async (req, res) => {
    const email = field(req.body, 'email') ?? '';
    const password = field(req.body, 'password') ?? '';
    const sentToken = field(req.body, 'csrf_token') ?? '';
    const cookieToken = readCookie(req, FORM_COOKIE) ?? '';
    if (isForeignOrigin(req) || !cookieToken || !sameText(sentToken, cookieToken)) {
      return showSignIn(req, res, 403, { email, error: consoleWords(req).t('console.signIn.expired') });
    }
    if (!email || !password) return showSignIn(req, res, 422, { email, error: consoleWords(req).t('console.signIn.missing') });

    const throttle = await throttled(req, res, email);
    if (throttle.wait) return showSignIn(req, res, 429, { email, error: tooMany(req, throttle.wait) });
    const { address, emailKey } = throttle;

    const member =
      storable(email) && storable(password) && email.length <= 254 && password.length <= 1024
        ? await memberByPassword(app, email, password)
        : undefined;
    if (!member) {
      await app.failedAttempts.record(address);
      await app.signInThrottle.refused(address, emailKey, app.now());
      return showSignIn(req, res, 401, { email, error: consoleWords(req).t('console.signIn.wrong') });
    }

    res.clearCookie(FORM_COOKIE, { ...cookieBase, path: '/console' });
    if (await hasTwoFactor(app.db, member.id)) {
      // The password was right; the session waits for the second factor.
      const token = await startChallenge(app.db, member.id, returnToOf(req), app.now());
      res.cookie(CHALLENGE_COOKIE, token, { ...cookieBase, path: '/console', maxAge: CHALLENGE_TTL_MS });
      return res.redirect(303, TWO_FACTOR_PATH);
    }
    await signIn(req, res, member.id, returnToOf(req));
  });

  /** A new session each time (never one a visitor was handed before), the old one ended; then on to `returnTo`. */
  const signIn = async (req: express.Request, res: express.Response, memberId: string, returnTo: string) => {
    const previous = await signedInMember(app, req);
    if (previous) await endMemberSession(app, previous.sessionId);
    const ttlMs = app.config.console.sessionTtlMs;
    const session = await startMemberSession(app.db, memberId, app.now(), ttlMs);
    res.cookie(cookieName, session.token, { ...cookieBase, maxAge: ttlMs });
    res.redirect(303, returnTo);
  };

  // The second factor: a code from the authenticator app, or a recovery code. Wrong codes count like
  // wrong passwords (the same slow-down); the waiting sign-in lasts five minutes.
  const challengeOf = async (req: express.Request) => {
    const token = readCookie(req, CHALLENGE_COOKIE);
    return token ? findChallenge(app.db, token, app.now()) : undefined;
  };
  const showTwoFactor = (req: express.Request, res: express.Response, status: number, error?: string) =>
    res.status(status).type('html').send(twoFactorPage(consoleWords(req), { error }));

  router.get(TWO_FACTOR_PATH, async (req, res) => {
    if (!(await challengeOf(req))) return res.redirect(303, '/console/sign-in');
    showTwoFactor(req, res, 200);
  });

  router.post(TWO_FACTOR_PATH, parseForm, async (req, res) => {
    if (isForeignOrigin(req)) throw errors.invalidCsrfToken();
    const challenge = await challengeOf(req);
    if (!challenge) return res.redirect(303, '/console/sign-in');
    const throttle = await throttled(req, res, challenge.email);
    if (throttle.wait) return showTwoFactor(req, res, 429, tooMany(req, throttle.wait));
    const code = (field(req.body, 'code') ?? '').slice(0, 100);
    if (!(await checkSecondFactor(app, challenge.memberId, code, app.now()))) {
      await app.failedAttempts.record(throttle.address);
      await app.signInThrottle.refused(throttle.address, throttle.emailKey, app.now());
      return showTwoFactor(req, res, 401, consoleWords(req).t('console.twoFactor.wrong'));
    }
    await endChallenge(app.db, challenge.id);
    res.clearCookie(CHALLENGE_COOKIE, { ...cookieBase, path: '/console' });
    await signIn(req, res, challenge.memberId, isSameOriginPath(challenge.returnTo) ? challenge.returnTo : HOME);
  });

  router.post('/console/sign-out', parseForm, async (req, res) => {
    const member = await signedInMember(app, req);
    if (member) {
      checkCsrf(member, req);
      await endMemberSession(app, member.sessionId);
    }
    res.clearCookie(cookieName, cookieBase);
    res.redirect(303, '/console/sign-in');
  });

  // One-time links (an invitation, a password reset): the token in the path is the capability; a
  // browser's Origin must still be this server's. A used or expired link gets 410.
  const linkRoute = '/console/link/:token';
  const showLink = async (req: express.Request, res: express.Response, status: number, error?: string) => {
    const token = String(req.params.token);
    const link = await openLink(app.db, token, app.now());
    res.status(status).type('html').send(linkPage(consoleWords(req), { token, ...link, error, minLength: MIN_PASSWORD_LENGTH }));
  };
  router.get(linkRoute, async (req, res) => showLink(req, res, 200));
  router.post(linkRoute, parseForm, async (req, res) => {
    if (isForeignOrigin(req)) throw errors.invalidCsrfToken();
    const password = field(req.body, 'new_password') ?? '';
    if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024 || !storable(password)) {
      return showLink(req, res, 422, consoleWords(req).t('console.password.length', { min: MIN_PASSWORD_LENGTH, max: 1024 }));
    }
    const email = await useLink(app, String(req.params.token), password, app.now());
    res.redirect(303, `/console/sign-in?email=${encodeURIComponent(email)}`);
  });
  router.use('/console/link', (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (!(err instanceof ApiError) || err.status !== 410 || res.headersSent) return next(err);
    res.status(410).type('html').send(usedLinkPage(consoleWords(req), problemText(req, err)));
  });

  router.use(organizationPages(app, { secure, clearSession: (res) => res.clearCookie(cookieName, cookieBase) }));

  // A console page or form that was refused: a page saying why (the live view's stream gets JSON).
  router.use('/console', (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (!(err instanceof ApiError) || res.headersSent || !req.accepts('html')) return next(err);
    for (const [name, value] of Object.entries(err.headers)) res.set(name, value);
    res.status(err.status).type('html').send(problemPage(consoleWords(req), err.status, problemText(req, err)));
  });

  return router;
}
