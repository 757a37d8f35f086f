// CORS for the public call and chat endpoints (DESIGN §9): an integrator's own page on another
// domain calls them with the key from its link; there are no cookies, so no credentials are allowed.
import type { RequestHandler } from 'express';

const PUBLIC_PREFIXES = ['/calls/public/', '/chat/public/'];

const ALLOWED_METHODS = 'GET, HEAD, POST, OPTIONS';
/** The keys, JSON bodies, and resuming an event stream. */
const ALLOWED_HEADERS = 'X-Call-Key, X-Chat-Key, Content-Type, Last-Event-ID';
/** What a page on another origin may read besides the CORS-safelisted headers. */
const EXPOSED_HEADERS = 'X-Request-Id, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';
/** Browsers cache a preflight this long (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = '7200';

/** Every answer under the public prefixes (errors included) may be read by any origin; preflights get 204. */
export function publicCors(): RequestHandler {
  return (req, res, next) => {
    if (!PUBLIC_PREFIXES.some((prefix) => req.path.startsWith(prefix))) return next();
    res.set({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED_HEADERS });
    if (req.method !== 'OPTIONS') return next();
    res
      .status(204)
      .set({
        'Access-Control-Allow-Methods': ALLOWED_METHODS,
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
        Allow: ALLOWED_METHODS,
      })
      .end();
  };
}
