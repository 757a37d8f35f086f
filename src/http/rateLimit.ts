import type { NextFunction, Request, Response } from 'express';
import type { AppContext } from '../appContext.js';
import { errors } from '../errors.js';

/** Counts the request against its principal's rolling window and reports the window in headers. */
export function rateLimit(app: AppContext) {
  const { requestsPerWindow, windowMs } = app.config.rateLimit;
  return async (req: Request, res: Response, next: NextFunction) => {
    const principal = req.principal;
    if (!principal) throw new Error('rate limit needs an authenticated principal');
    const result = await app.rateLimits.hit(principal.rateLimitKey, requestsPerWindow, windowMs);
    res.set({
      'X-RateLimit-Limit': String(result.limit),
      'X-RateLimit-Remaining': String(result.remaining),
      'X-RateLimit-Reset': String(result.resetAtSeconds),
    });
    if (!result.allowed) throw errors.rateLimited(result.limit, result.retryAfterSeconds);
    next();
  };
}
