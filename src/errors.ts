// The error catalogue: every error a client can see, with its status and stable message.

export interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** A 422 lists this many problems at most, then one `too_many_errors` item saying how many more there were. */
export const MAX_LISTED_ISSUES = 100;

/** The first problems, and a count of the rest: a client fixes a request from the top, and a huge list helps nobody. */
function listed(issues: ValidationIssue[]): ValidationIssue[] {
  if (issues.length <= MAX_LISTED_ISSUES) return issues;
  const more = issues.length - MAX_LISTED_ISSUES;
  return [
    ...issues.slice(0, MAX_LISTED_ISSUES),
    { loc: [], msg: `${more} more problem${more === 1 ? '' : 's'} not listed; fix these and send again`, type: 'too_many_errors' },
  ];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationIssue[],
    readonly headers: Record<string, string> = {},
    /** Fields a protocol requires beside `detail` (OAuth's `error` and `error_description`). */
    readonly fields: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : 'request validation failed');
    this.name = 'ApiError';
  }
}

/** Streams do not end on a schedule: a client refused for holding too many may look again after this. */
const STREAM_RETRY_AFTER_SECONDS = 30;

export const errors = {
  badRequest: (detail: string) => new ApiError(400, detail),
  missingCredentials: () =>
    new ApiError(401, 'missing API key: send Authorization: Bearer <key> or X-Api-Key: <key>'),
  invalidApiKey: () => new ApiError(401, 'invalid API key: unknown, revoked or expired'),
  invalidAccessToken: () =>
    new ApiError(401, 'invalid access token: unknown, revoked or expired', { 'WWW-Authenticate': 'Bearer error="invalid_token"' }),
  /** RFC 6749 5.2: `error` and `error_description`, and `detail` like every other error of this API. */
  oauth: (status: 400 | 401, error: string, description: string, headers: Record<string, string> = {}) =>
    new ApiError(status, description, { 'Cache-Control': 'no-store', ...headers }, { error, error_description: description }),
  invalidAdminToken: () => new ApiError(401, 'invalid admin token'),
  signedOut: () => new ApiError(401, 'not signed in to the console, or the session has ended: sign in again'),
  invalidCallKey: () => new ApiError(401, 'missing or invalid X-Call-Key for this call'),
  invalidChatKey: () => new ApiError(401, 'missing or invalid X-Chat-Key: this chat link is no longer valid'),
  paymentRequired: () => new ApiError(402, 'the prepaid balance has run out; add credit to continue'),
  insufficientBalance: (cost: string, available: string) =>
    new ApiError(
      402,
      `this request costs ${cost} and the prepaid balance has ${available} available (money held by requests in progress is not); add credit to continue`,
    ),
  missingScope: (scope: string) => new ApiError(403, `missing scope: ${scope}`),
  /** A console member whose role does not allow the action (`needed`: the least role that does). */
  roleRequired: (needed: 'owner' | 'admin', role: string) =>
    new ApiError(403, `this needs the ${needed} role${needed === 'admin' ? ' or owner' : ''}; you are ${role === 'admin' ? 'an' : 'a'} ${role}. Ask an owner of the organization`),
  twoFactorRequired: () =>
    new ApiError(403, 'the organization requires two-factor sign-in: set it up on Your account first'),
  invalidTwilioSignature: () => new ApiError(403, 'invalid X-Twilio-Signature'),
  invalidCsrfToken: () =>
    new ApiError(403, 'missing or invalid CSRF token, or a form sent from another site; reload the page and try again'),
  notFound: (what = 'resource') => new ApiError(404, `${what} not found`),
  routeNotFound: (method: string, path: string) => new ApiError(404, `no such endpoint: ${method} ${path}`),
  methodNotAllowed: (method: string, allowed: string[]) =>
    new ApiError(405, `method ${method} is not allowed here; allowed: ${allowed.join(', ')}`, {
      Allow: allowed.join(', '),
    }),
  conflict: (detail: string) => new ApiError(409, detail),
  lastOwner: () => new ApiError(409, 'the organization must keep an active owner: make another member owner first'),
  linkUsed: () => new ApiError(410, 'this link has been used or has expired; ask for a new one'),
  payloadTooLarge: (detail: string) => new ApiError(413, detail),
  invalid: (issues: ValidationIssue[]) => new ApiError(422, listed(issues)),
  rateLimited: (limit: number, retryAfterSeconds: number) =>
    new ApiError(429, `rate limit of ${limit} requests per minute exceeded; retry after ${retryAfterSeconds} seconds`, {
      'Retry-After': String(retryAfterSeconds),
    }),
  tooManyFailedAttempts: (retryAfterSeconds: number) =>
    new ApiError(429, `too many failed attempts from your address; retry after ${retryAfterSeconds} seconds`, {
      'Retry-After': String(retryAfterSeconds),
    }),
  tooManyStreams: (holder: 'API key' | 'chat session' | 'console session', limit: number) =>
    new ApiError(429, `too many open event streams for this ${holder} (at most ${limit}); close one before opening another`, {
      'Retry-After': String(STREAM_RETRY_AFTER_SECONDS),
    }),
  // Answered by the HTTP server itself, before a request reaches the app.
  malformedRequest: () => new ApiError(400, 'malformed HTTP request'),
  requestTimeout: () => new ApiError(408, 'the request did not arrive in time; send it again'),
  headersTooLarge: () => new ApiError(431, 'the request headers are too large'),
  internal: (requestId: string) =>
    new ApiError(500, `internal error; quote request id ${requestId} to the operator`),
  upstream: (detail: string) => new ApiError(502, detail),
  unavailable: (detail: string) => new ApiError(503, detail),
  databaseUnavailable: (reason: string, retryAfterSeconds: number) =>
    new ApiError(503, `the database is unavailable or too slow (${reason}); retry after ${retryAfterSeconds} seconds`, {
      'Retry-After': String(retryAfterSeconds),
    }),
};
