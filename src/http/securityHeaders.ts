// Headers that keep browsers from misreading answers and pages from being abused.
import type { RequestHandler, Response } from 'express';

/** Every answer: a browser takes the declared Content-Type at its word (no sniffing JSON into HTML). */
export function setNoSniff(res: Response): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

/**
 * Who may frame a page: the customer's chat page (and later the call page) lives inside an
 * integrator's own site, so any ancestor; pages of this server itself (the reference, and later the
 * console) only this origin.
 */
export type Framing = 'anyone' | 'self';

/**
 * What our HTML pages may load: their own scripts, styles and connections only (no inline script,
 * no eval, no CDN), images and audio also from data:/blob: URLs the page makes itself (recordings
 * played back, inline icons), nothing embedded.
 */
const PAGE_SOURCES = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
].join('; ');

/**
 * The Content-Security-Policy of an HTML page. Its forms post to this server; `formTargets` are the
 * other origins a form may end on (browsers also check where a form's answer redirects to).
 */
export function pageSecurityPolicy(framing: Framing, formTargets: readonly string[] = []): string {
  return `${PAGE_SOURCES}; form-action ${["'self'", ...formTargets].join(' ')}; frame-ancestors ${framing === 'anyone' ? '*' : "'self'"}`;
}

/** Content-Security-Policy (and the older X-Frame-Options where framing is ours only) for an HTML page. */
export function pageSecurity(framing: Framing): RequestHandler {
  const policy = pageSecurityPolicy(framing);
  return (_req, res, next) => {
    res.set('Content-Security-Policy', policy);
    if (framing === 'self') res.set('X-Frame-Options', 'SAMEORIGIN');
    next();
  };
}
