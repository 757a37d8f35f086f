import type { NextFunction, Request, Response } from 'express';
import type { AppContext } from './context.js';
import { errors } from '../errors.js';

/** Which rolling window a request counts in. */
export type RateLimitBucket = (req: Request) => string;

/** API keys and app connections each have their own window. */
export const perPrincipal: RateLimitBucket = (req) => {
  if (!req.principal) throw new Error('rate limit needs an authenticated principal');
  return req.principal.rateLimitKey;
};

/**
 * The public call and chat endpoints have no API key: each call or session has its own window, spent
 * only by requests that proved they hold it (see authenticateCallKey/authenticateChatKey).
 */
export const perCall: RateLimitBucket = (req) => {
  if (!req.callSide) throw new Error('rate limit needs an authenticated call side');
  return `call:${req.callSide.call.id}`;
};

export const perSession: RateLimitBucket = (req) => {
  if (!req.chat) throw new Error('rate limit needs an authenticated chat session');
  return `session:${req.chat.session.id}`;
};

/** Which limit refused a request, for the metrics: an API key's, an app's, a call's or a chat session's. */
const limitName = (bucket: RateLimitBucket, req: Request) =>
  bucket === perPrincipal ? (req.principal?.kind === 'app' ? 'app' : 'api_key') : bucket === perCall ? 'call' : 'chat_session';

/** Counts the request against its window and reports the window in headers. */
export function rateLimit(app: AppContext, bucket: RateLimitBucket) {
  const { requestsPerWindow, appRequestsPerWindow, windowMs } = app.config.rateLimit;
  return async (req: Request, res: Response, next: NextFunction) => {
    const limit = req.principal?.kind === 'app' ? appRequestsPerWindow : requestsPerWindow;
    const result = await app.rateLimits.hit(bucket(req), limit, windowMs);
    res.set({
      'X-RateLimit-Limit': String(result.limit),
      'X-RateLimit-Remaining': String(result.remaining),
      'X-RateLimit-Reset': String(result.resetAtSeconds),
    });
    if (!result.allowed) {
      app.metrics.rateLimitRefusals.inc({ limit: limitName(bucket, req) });
      throw errors.rateLimited(result.limit, result.retryAfterSeconds);
    }
    next();
  };
}
