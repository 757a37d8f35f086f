import { timingSafeEqual, createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { AppContext } from '../appContext.js';
import type { ApiPrincipal } from '../auth/principal.js';
import { errors } from '../errors.js';
import { authenticateApiKey } from '../services/apiKeys.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      principal?: ApiPrincipal;
      requestId: string;
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
    req.principal = await authenticateApiKey(app.db, credential);
    next();
  };
}

export function requireScope(scope: string) {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!req.principal?.scopes.includes(scope as never)) throw errors.missingScope(scope);
    next();
  };
}

const digest = (value: string) => createHash('sha256').update(value).digest();

export function authenticateAdmin(app: AppContext) {
  const expected = digest(app.adminToken);
  return (req: Request, _res: Response, next: NextFunction) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
    // Compare digests so the comparison takes the same time whatever was sent.
    if (!match || !timingSafeEqual(digest(match[1]), expected)) throw errors.invalidAdminToken();
    next();
  };
}
