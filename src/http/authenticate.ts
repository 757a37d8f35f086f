import { hash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppContext } from './context.js';
import type { ApiPrincipal } from '../auth/principal.js';
import { callForSide } from '../calls/calls.js';
import { ApiError, errors } from '../errors.js';
import { authenticateAccessToken, isAccessToken } from '../oauth/accessTokens.js';
import { authenticateApiKey } from '../auth/apiKeys.js';
import { sessionForCustomer } from '../sessions/sessions.js';
import type { CallSide, ChatAccess } from './handler.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      principal?: ApiPrincipal;
      callSide?: CallSide;
      chat?: ChatAccess;
      requestId: string;
      /** The contract operation the request matched (metrics label). */
      operationId?: string;
    }
  }
}

/** `Authorization: Bearer <x>` wins over `X-Api-Key: <x>`; undefined when neither is sent. */
export function presentedCredential(req: Request): string | undefined {
  const authorization = req.get('authorization');
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match ? match[1] : '';
  }
  return req.get('x-api-key')?.trim();
}

export function authenticateApi(app: AppContext) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const credential = presentedCredential(req);
    if (credential === undefined) throw errors.missingCredentials();
    req.principal = isAccessToken(credential) ? await authenticateAccessToken(app, credential) : await authenticateApiKey(app, credential);
    next();
  };
}

/** The operation's `x-scope`: one scope, or several separated by `|` of which any one will do. */
export function requireScope(scope: string) {
  const anyOf = scope.split('|');
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!anyOf.some((one) => req.principal?.scopes.includes(one as never))) throw errors.missingScope(anyOf.join(' or '));
    next();
  };
}

const digest = (value: string) => hash('sha256', value, 'buffer');

type Authenticator = (req: Request) => void | Promise<void>;

/**
 * Guessing is limited per client address, not per target: an address whose credentials or ids were
 * refused (401, 404) too often in the last minute gets 429 without being checked at all, and a
 * refusal never spends the budget of whoever really holds the call, chat or token.
 */
function limitingFailedAttempts(app: AppContext, authenticate: Authenticator): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const address = app.failedAttempts.addressOf(req);
    const wait = await app.failedAttempts.retryAfter(address);
    if (wait) throw errors.tooManyFailedAttempts(wait);
    try {
      await authenticate(req);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 404)) await app.failedAttempts.record(address);
      throw err;
    }
    next();
  };
}

export function authenticateAdmin(app: AppContext): RequestHandler {
  const expected = digest(app.adminToken);
  return limitingFailedAttempts(app, (req) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
    // Compare digests so the comparison takes the same time whatever was sent.
    if (!match || !timingSafeEqual(digest(match[1]), expected)) throw errors.invalidAdminToken();
  });
}

/** Public call endpoints: the call must exist (404) and X-Call-Key be one of its sides' keys (401). */
export function authenticateCallKey(app: AppContext): RequestHandler {
  return limitingFailedAttempts(app, async (req) => {
    req.callSide = await callForSide(app.db, String(req.params.call_id), req.get('x-call-key'));
  });
}

/** Customer chat endpoints: the session must exist (404) and X-Chat-Key be its current key (401). */
export function authenticateChatKey(app: AppContext): RequestHandler {
  return limitingFailedAttempts(app, async (req) => {
    const session = await sessionForCustomer(app.db, String(req.params.session_id), req.get('x-chat-key'));
    // The key matched the session's current one, so its hash is the one stored.
    req.chat = { session, keyHash: session.customer_key_hash };
  });
}
