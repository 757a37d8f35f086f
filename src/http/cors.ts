// CORS for the public call and chat endpoints (docs/api-behaviour.md): an integrator's own page on another
// domain calls them with the key from its link; there are no cookies, so no credentials are allowed.
import type { Request, Response } from 'express';

const PUBLIC_PREFIXES = ['/calls/public/', '/chat/public/'] as const;

const ALLOWED_METHODS = 'GET, HEAD, POST, OPTIONS';
/** The keys, JSON bodies, and resuming an event stream. */
const ALLOWED_HEADERS = 'X-Call-Key, X-Chat-Key, Content-Type, Last-Event-ID';
/** What a page on another origin may read besides the CORS-safelisted headers. */
const EXPOSED_HEADERS = 'X-Request-Id, Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';
/** Browsers cache a preflight this long (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = '7200';

/**
 * Every answer under the public prefixes (errors included) may be read by any origin; preflights get
 * 204. True when the request was a preflight and has been answered.
 */
export function applyPublicCors(req: Request, res: Response): boolean {
  const path = req.path;
  if (!path.startsWith(PUBLIC_PREFIXES[0]) && !path.startsWith(PUBLIC_PREFIXES[1])) return false;
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
  if (req.method !== 'OPTIONS') return false;
  res
    .status(204)
    .set({
      'Access-Control-Allow-Methods': ALLOWED_METHODS,
      'Access-Control-Allow-Headers': ALLOWED_HEADERS,
      'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
      Allow: ALLOWED_METHODS,
    })
    .end();
  return true;
}
